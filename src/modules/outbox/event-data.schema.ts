/**
 * The `data` of every event kind, exactly as the emitting code builds it today (snake_case
 * keys, ids as strings: decisions.md §2, §8), and the envelope's `metadata`. The webhook
 * reference (docs/events.md, `npx tsx scripts/events.ts`) is generated from these, and
 * test/outbox/event-payloads.test.ts checks real outbox rows against them.
 */
import Type from 'typebox';
import type { EventType } from './outbox.writer.js';

const Nullable = <T extends Type.TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });
/** An int64 id, as a string (decisions.md §2). */
const Id = (description?: string) => Type.String({ pattern: '^[1-9][0-9]{0,18}$', ...(description ? { description } : {}) });
const closed = { additionalProperties: false } as const;

// ---- Orders (order.lifecycle.ts recordEvent, the data from order.mapper.ts orderEventData) ----

const OrderItem = Type.Object(
  {
    cheese_id: Nullable(Id(), 'The cheese\'s id; null once the cheese has been deleted from the catalogue, which never happens while the order is open (deleting it cancels the order first), so events carry it.'),
    name: Type.String({ description: 'The cheese\'s name when the order was placed.' }),
    quantity_kg: Type.Number({ exclusiveMinimum: 0, description: 'Kilograms ordered.' }),
    price_per_kg: Type.Number({ minimum: 0, description: 'USD per kilogram when the order was placed.' }),
  },
  closed,
);
const trackingFields = {
  tracking_number: Type.String({ description: 'The carrier\'s tracking number.' }),
  carrier: Type.String({ description: 'Who carries the parcel.' }),
  estimated_delivery: Type.String({ format: 'date-time', description: 'When the parcel is expected.' }),
};
const orderExample = (status: string) => ({
  order_id: '1042',
  status,
  customer: 'marie.dupont',
  total: 97.75,
  currency: 'USD',
  shipping_method: 'express_chilled',
  items: [{ cheese_id: '17', name: 'Comté 24 mois', quantity_kg: 1.5, price_per_kg: 34.5 }, { cheese_id: '23', name: 'Roquefort Papillon', quantity_kg: 0.5, price_per_kg: 42 }],
});
const tracked = { tracking_number: 'FRX-3A9C51D2E7', carrier: 'Fromagerie Express (simulated)', estimated_delivery: '2026-06-13T10:15:00.000Z' };

/** Every order event carries the order as it is after the change; the tracking fields exactly once it has shipped. */
function orderData(status: 'placed' | 'approved' | 'shipped' | 'delivered' | 'cancelled', description: string, shipped: boolean) {
  return Type.Object(
    {
      order_id: Id('The order\'s id.'),
      status: Type.Literal(status, { description: `Always \`${status}\`: the order's status after the change.` }),
      customer: Nullable(Type.String(), 'The username of who placed it; null once that account has been deleted (the order is kept, anonymised).'),
      total: Type.Number({ minimum: 0, description: 'USD: the items at their prices when placed, plus the shipping fee.' }),
      currency: Type.Literal('USD', { description: 'Always `USD`.' }),
      shipping_method: Type.Enum(['standard', 'temperature_controlled', 'express_chilled'], { description: 'How the order ships.' }),
      items: Type.Array(OrderItem, { minItems: 1, description: 'The order\'s lines, in order.' }),
      ...(shipped ? trackingFields : {}),
    },
    { ...closed, description, examples: [{ ...orderExample(status), ...(shipped ? tracked : {}) }] },
  );
}

// ---- Catalogue (cheese.service, stock.service, season-opening.job) ----

const cheeseIdentity = {
  cheese_id: Id('The cheese\'s id.'),
  slug: Type.String({ description: 'The cheese\'s unique URL-safe slug (also accepted wherever a cheese id is).' }),
  name: Type.String({ description: 'The cheese\'s name.' }),
};
const cheeseState = {
  ...cheeseIdentity,
  status: Type.Enum(['available', 'pending', 'sold'], { description: 'The cheese\'s status after the change.' }),
  in_stock: Type.Boolean({ description: '`stock_quantity_kg > 0`.' }),
  stock_quantity_kg: Type.Number({ minimum: 0, description: 'The stock after the change, in kilograms (whole grams).' }),
  price_per_kg: Nullable(Type.Number({ minimum: 0 }), 'USD per kilogram; null when the cheese has no price (it cannot be ordered).'),
};
const comte = { cheese_id: '17', slug: 'comte-24-mois', name: 'Comté 24 mois' };

const NewArrival = Type.Object(cheeseState, {
  ...closed,
  description: 'A cheese was added to the catalogue. Its stock may be 0 and its status anything: a new arrival is announced whatever its state.',
  examples: [{ cheese_id: '212', slug: 'valencay', name: 'Valençay', status: 'available', in_stock: true, stock_quantity_kg: 12, price_per_kg: 48 }],
});

const LowStock = Type.Object(
  {
    ...cheeseState,
    in_stock: Type.Literal(true, { description: 'Always true: the stock is above 0.' }),
    stock_quantity_kg: Type.Number({ exclusiveMinimum: 0, description: 'The stock after the change, in kilograms: above 0 and below `low_stock_threshold_kg`.' }),
    low_stock_threshold_kg: Type.Number({ minimum: 0, description: 'The deployment\'s threshold (`LOW_STOCK_THRESHOLD_KG`).' }),
  },
  {
    ...closed,
    description: 'A cheese\'s stock dropped below the low-stock threshold but not to 0 (that is `cheese.out_of_stock`); once per crossing: it fires again only after the stock has been back at or above the threshold.',
    examples: [{ ...comte, status: 'available', in_stock: true, stock_quantity_kg: 3.5, price_per_kg: 34.5, low_stock_threshold_kg: 5 }],
  },
);

const OutOfStock = Type.Object(
  {
    ...cheeseState,
    status: Type.Literal('sold', { description: 'Always `sold`: reaching 0 kg sells the cheese out.' }),
    in_stock: Type.Literal(false, { description: 'Always false.' }),
    stock_quantity_kg: Type.Literal(0, { description: 'Always 0.' }),
  },
  { ...closed, description: 'A cheese\'s stock reached 0 kg; the cheese is now `sold`.', examples: [{ ...comte, status: 'sold', in_stock: false, stock_quantity_kg: 0, price_per_kg: 34.5 }] },
);

const restocked = { ...comte, status: 'available', in_stock: true, stock_quantity_kg: 40, price_per_kg: 34.5 };
const seasonOpened = { cheese_id: '88', slug: 'vacherin-mont-d-or', name: 'Vacherin Mont-d\'Or', reason: 'season_opened', season_month: 9, in_stock: true };
const Restocked = Type.Object(
  {
    ...cheeseState,
    status: Type.Enum(['available', 'pending'], { description: '`available`, or `pending` when the restocking write itself asked for `pending`.' }),
    in_stock: Type.Literal(true, { description: 'Always true.' }),
    stock_quantity_kg: Type.Number({ exclusiveMinimum: 0, description: 'The stock after the change, in kilograms.' }),
  },
  {
    ...closed,
    title: 'Restocked',
    description: 'The stock went from 0 kg to more (a catalogue write, or a cancelled order giving its stock back).',
    examples: [restocked],
  },
);

const SeasonOpened = Type.Object(
  {
    ...cheeseIdentity,
    reason: Type.Literal('season_opened', { description: 'Always `season_opened`: this shape is told apart by this field.' }),
    season_month: Type.Integer({ minimum: 1, maximum: 12, description: 'The month (1 to 12, UTC) whose window opened.' }),
    in_stock: Type.Boolean({ description: 'Whether the cheese has stock now: the season may open on an empty shelf (false).' }),
  },
  {
    ...closed,
    title: 'Season opened',
    description: 'A seasonal cheese\'s window of months opened (once per cheese and opening). No status, stock or price here.',
    examples: [seasonOpened],
  },
);

const BackInStock = Type.Union([Restocked, SeasonOpened], {
  description: 'A cheese can be ordered again. Two shapes: a restock (the cheese fields) or a season opening (`reason: "season_opened"`).',
  examples: [restocked, seasonOpened],
});

// ---- Customers (customer.service, address.service, preferences.service, subscription.service) ----

const TIERS = ['bronze', 'silver', 'gold', 'platinum'] as const;
const customerIdentity = {
  customer_id: Id('The customer\'s id (their account\'s).'),
  username: Type.String({ description: 'The customer\'s username.' }),
};
export const CUSTOMER_CHANGES = ['email', 'firstName', 'lastName', 'phone', 'favouriteCheese', 'password', 'addresses', 'preferences', 'customerStatus'] as const;

const CustomerCreated = Type.Object(
  { ...customerIdentity, customer_status: Type.Literal('bronze', { description: 'Always `bronze`: every new customer starts on it.' }) },
  { ...closed, description: 'A customer signed up. No personal data (e-mail, names, addresses) travels in events.', examples: [{ customer_id: '311', username: 'marie.dupont', customer_status: 'bronze' }] },
);

const CustomerUpdated = Type.Object(
  {
    ...customerIdentity,
    customer_status: Type.Enum(TIERS, { description: 'The tier after the change.' }),
    changed: Type.Array(Type.Enum(CUSTOMER_CHANGES), {
      uniqueItems: true,
      description: 'What changed, by the API\'s own (camelCase) names: profile fields, `password`, `addresses`, `preferences`, or `customerStatus` (the tier). Empty when a PUT changed nothing.',
    }),
  },
  { ...closed, description: 'A customer\'s profile, password, addresses, preferences or tier changed.', examples: [{ customer_id: '311', username: 'marie.dupont', customer_status: 'silver', changed: ['phone'] }] },
);

const SubscriptionChanged = Type.Object(
  {
    ...customerIdentity,
    action: Type.Enum(['started', 'changed', 'cancelled'], { description: '`started` for a new subscription, `changed` for a PUT on an existing one (also one restarted after a cancellation), `cancelled` for a DELETE.' }),
    plan: Type.Literal('cheese_of_the_month', { description: 'The plan; only one exists.' }),
    status: Type.Enum(['active', 'cancelled'], { description: '`cancelled` after a DELETE, `active` otherwise.' }),
    quantity_kg: Type.Number({ minimum: 0.1, maximum: 5, description: 'Kilograms of cheese each month (steps of 0.05).' }),
    day_of_month: Type.Integer({ minimum: 1, maximum: 28, description: 'The day of each month the order is placed (at 09:00 UTC).' }),
    shipping_method: Type.Enum(['standard', 'temperature_controlled', 'express_chilled'], { description: 'How each month\'s order ships.' }),
    next_order_at: Nullable(Type.String({ format: 'date-time' }), 'When the next month\'s order is placed; null once cancelled.'),
  },
  {
    ...closed,
    description: 'A customer started, changed or cancelled their cheese-of-the-month subscription. Unlike the other customer events, no `customer_status`.',
    examples: [{ customer_id: '311', username: 'marie.dupont', action: 'started', plan: 'cheese_of_the_month', status: 'active', quantity_kg: 0.5, day_of_month: 5, shipping_method: 'temperature_controlled', next_order_at: '2026-07-05T09:00:00.000Z' }],
  },
);

// ---- Identity and webhooks ----

const ApiKeyExpiring = Type.Object(
  {
    api_key_id: Id('The key\'s id.'),
    account_id: Id('The id of the account the key belongs to.'),
    prefix: Type.String({ description: 'The key\'s first 16 characters, to tell keys apart (never the key itself).' }),
    name: Nullable(Type.String(), 'The name given to the key, or null.'),
    expires_at: Type.String({ format: 'date-time', description: 'When the key stops working (within the next 7 days).' }),
  },
  {
    ...closed,
    description: 'An active API key enters its last 7 days (once per key).',
    examples: [{ api_key_id: '57', account_id: '311', prefix: 'sk_test_Xq3v9Lm2', name: 'storefront', expires_at: '2026-07-01T00:00:00.000Z' }],
  },
);

const WebhookTest = Type.Object(
  { webhook_id: Id('The webhook endpoint\'s id.'), message: Type.String({ description: 'A human-readable text saying this is a test.' }) },
  { ...closed, description: 'A test delivery, sent by POST /v2/webhooks/{id}/test to that webhook alone, to try an endpoint and its signature check.', examples: [{ webhook_id: '12', message: 'A test event from Fromagerie: your endpoint is reachable and verifies our signatures.' }] },
);

// ---- Metadata and the registries ----

export const Metadata = Type.Object(
  {
    api_version: Type.String({ description: 'The API version of the deployment that recorded the event.' }),
    environment: Type.Enum(['development', 'sandbox', 'production'], { description: 'The deployment\'s `CHEESE_ENV`.' }),
    request_id: Nullable(Type.String(), 'The `X-Request-Id` of the request that caused the event, on events of one account (`order.*`, `customer.*`, `api_key.*`, `webhook.*`) caused by that account\'s own request; null when staff\'s request caused it (an order advanced or cancelled by staff), null for background jobs (the order worker, the hourly jobs), and always null on events others see (`cheese.*`, which any `read:cheeses` caller and every subscribed webhook receives, and staff-only events such as those of an order whose account is gone): those never show one caller\'s request to another.'),
    idempotency_key: Nullable(
      Type.String({ minLength: 1, maxLength: 255 }),
      'The `Idempotency-Key` of the request that caused the event, when it sent one to an operation that honours it, on events of one account caused by its own request only (as `request_id`); null otherwise (staff\'s requests too): background jobs, events recorded before 2.5, and always on `cheese.*` and staff-only events.',
    ),
    object_type: Type.String({ description: 'What the event is about: `order`, `cheese`, `customer`, `api_key` or `webhook`. With `object_id`, what `GET /v2/events?object_type=…&object_id=…` filters on.' }),
    object_id: Type.String({ description: 'The id of what the event is about, as a string (an order\'s, a cheese\'s, a customer\'s account\'s, an API key\'s, a webhook\'s).' }),
    sequence: Type.Optional(Type.Integer({ minimum: 1, description: 'Order events only: the order\'s events numbered from 1, to put them in order.' })),
    order_id: Type.Optional(Id('Order events only: the order\'s id.')),
  },
  {
    ...closed,
    description: 'Every event\'s `metadata`.',
    examples: [{ api_version: '2.4.0', environment: 'production', request_id: '6f1c2b9e-3a4d-4e8f-9b1a-2c3d4e5f6a7b', idempotency_key: 'order-7d1f0c2e', object_type: 'order', object_id: '1042', sequence: 1, order_id: '1042' }],
  },
);

export const EVENT_DATA_SCHEMAS: Record<EventType, Type.TSchema> = {
  'order.placed': orderData('placed', 'An order was placed: its stock is reserved and its payment authorised. No tracking fields yet.', false),
  'order.confirmed': orderData('approved', 'The order\'s payment was captured (Form A\'s `approved`). No tracking fields yet.', false),
  'order.shipped': orderData('shipped', 'The order was handed to the carrier: the tracking fields are always present.', true),
  'order.delivered': orderData('delivered', 'The order was delivered. The tracking fields are always present.', true),
  'order.cancelled': orderData('cancelled', 'A placed or approved order was cancelled: its stock is back and its payment authorisation voided. Never tracking fields (a shipped order cannot be cancelled).', false),
  'cheese.back_in_stock': BackInStock,
  'cheese.low_stock': LowStock,
  'cheese.out_of_stock': OutOfStock,
  'cheese.new_arrival': NewArrival,
  'customer.created': CustomerCreated,
  'customer.updated': CustomerUpdated,
  'customer.subscription_changed': SubscriptionChanged,
  'webhook.test': WebhookTest,
  'api_key.expiring': ApiKeyExpiring,
};

const STOCK_WRITES = 'PUT /v2/cheeses or an `update` operation of POST /v2/cheeses/bulk';

export const EVENT_TRIGGERS: Record<EventType, string> = {
  'order.placed': 'POST /v2/orders or POST /v2/store/order places an order, and so does the order worker for each month of a cheese-of-the-month subscription.',
  'order.confirmed': 'The order worker captures the payment of a placed order (placed → approved), as do staff with PATCH /v2/orders/{id} `{"status": "approved"}` and POST /v2/sandbox/orders/{id}/advance.',
  'order.shipped': 'The order worker hands an approved order to the courier (approved → shipped), as do staff with PATCH /v2/orders/{id} `{"status": "shipped"}` (optionally with `carrier` and `trackingNumber`) and the sandbox advance.',
  'order.delivered': 'The order worker marks a shipped order delivered, as do staff with PATCH /v2/orders/{id} `{"status": "delivered"}` and the sandbox advance.',
  'order.cancelled': 'DELETE /v2/store/order/{orderId} (or staff PATCH /v2/orders/{id} `{"status": "cancelled"}`) cancels a placed or approved order, as does deleting one of its cheeses or the customer\'s account.',
  'cheese.back_in_stock': `A change taking a cheese's stock from 0 kg to more (${STOCK_WRITES}, or a cancelled order giving its stock back), or the hourly season job when a seasonal cheese's window opens.`,
  'cheese.low_stock': `A change taking a cheese's stock from at or above the low-stock threshold to below it but above 0 (${STOCK_WRITES}, or an order placed).`,
  'cheese.out_of_stock': `A change taking a cheese's stock to 0 kg (an order placed, or ${STOCK_WRITES}).`,
  'cheese.new_arrival': 'POST /v2/cheeses (or a `create` operation of POST /v2/cheeses/bulk) adds a cheese; the first load of the seed catalogue records none.',
  'customer.created': 'POST /v2/customer signs a customer up.',
  'customer.updated': 'PUT /v2/customer/{username}, a change to /v2/customer/{username}/addresses, PUT /v2/customer/{username}/preferences, or a new tier (at a delivery, or hourly as deliveries age out) records it.',
  'customer.subscription_changed': 'PUT /v2/customer/{username}/subscription starts or changes the cheese-of-the-month subscription; DELETE cancels it.',
  'webhook.test': 'POST /v2/webhooks/{id}/test sends it to that webhook alone, at once, whatever it subscribes to.',
  'api_key.expiring': 'The hourly job records it once for each API key that is neither revoked nor expired when it enters its last 7 days.',
};
