import Type from 'typebox';
import { ID_OR_SLUG_PATTERN } from '../../http/common.schema.js';
import { COUNTRY_CODE_FORMAT } from '../../kernel/countries.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';
import { ORDER_STATUSES, SHIPPING_METHODS } from './order.table.js';

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: VISIBLE_TEXT_PATTERN });
const Money = (description: string) => Type.Number({ description: `${description} In USD, two decimals.` });
const Country = Type.String({ format: COUNTRY_CODE_FORMAT, description: 'ISO 3166-1 alpha-2 (`FR`, `us`): a code that exists.' });

export const OrderAddress = Type.Object(
  {
    street: Type.String({ examples: ['12 rue des Fromagers'] }),
    city: Type.String({ examples: ['Lyon'] }),
    state: Nullable(Type.String()),
    zipCode: Nullable(Type.String({ examples: ['69002'] })),
    country: Type.String({ pattern: '^[A-Z]{2}$', examples: ['FR'] }),
  },
  { $id: 'OrderAddress', description: 'Form A `Address`; Form B\'s `line1` is `street`.' },
);

export const OrderItem = Type.Object(
  {
    cheeseId: Nullable(Type.Integer({ format: 'int64', description: 'null once the cheese has been deleted from the catalogue.' })),
    cheeseSlug: Type.String(),
    cheeseName: Type.String({ description: 'As it was named when the order was placed.' }),
    quantity: Type.Number({ description: 'Kilograms (Form A). Whole for orders placed through Form A; Form B orders may hold fractions.' }),
    quantityKg: Type.Number({ description: 'Kilograms (Form B `quantity_kg`); the same value as `quantity`.' }),
    pricePerKg: Money('The price per kilogram when the order was placed: later catalogue changes never alter it.'),
    lineTotal: Money('quantityKg × pricePerKg, rounded to cents (the order total is rounded once, over all lines).'),
  },
  { $id: 'OrderItem' },
);

export const Tracking = Type.Object(
  {
    orderId: Type.Integer({ format: 'int64' }),
    status: Type.Enum([...ORDER_STATUSES]),
    carrier: Type.String({ examples: ['Fromagerie Express (simulated)'] }),
    trackingNumber: Type.String({ examples: ['FRX-4F2A9C1B7D'] }),
    estimatedDelivery: Type.String({ format: 'date-time' }),
    timeline: Type.Array(
      Type.Object({ status: Type.Enum([...ORDER_STATUSES]), at: Type.String({ format: 'date-time' }), note: Nullable(Type.String()) }),
      { description: 'Every status the order has had, oldest first.' },
    ),
  },
  { $id: 'Tracking' },
);

export const Order = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    customer: Nullable(Type.String({ description: 'The username of who placed it; null once that account has been deleted (the order is kept, anonymised).' })),
    status: Type.Enum([...ORDER_STATUSES], { description: '`approved` is Form B\'s `confirmed` (payment captured).' }),
    items: Type.Array(OrderItem),
    shippingAddress: OrderAddress,
    shipping: Type.Object({ method: Type.Enum([...SHIPPING_METHODS]), fee: Money('The shipping fee.') }),
    notes: Nullable(Type.String()),
    subtotal: Money('Σ quantityKg × pricePerKg, rounded to cents.'),
    total: Money('subtotal + shipping fee.'),
    currency: Type.Literal('USD'),
    shipDate: Nullable(Type.String({ format: 'date-time', description: 'Estimated ship date once payment is captured; the actual date once shipped.' })),
    tracking: Nullable(Type.Object({ carrier: Type.String(), trackingNumber: Type.String(), estimatedDelivery: Type.String({ format: 'date-time' }) })),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Order' },
);
export type OrderView = Type.Static<typeof Order>;
export type TrackingView = Type.Static<typeof Tracking>;

const AddressA = Type.Object(
  { street: Text(200), city: Text(100), state: Type.Optional(Nullable(Text(100))), zipCode: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{0,11}$' }))), country: Country },
  { additionalProperties: false },
);

/** Form A's OrderInput: whole kilograms; ships `standard`. */
export const StoreOrderInput = Type.Object(
  {
    items: Type.Array(Type.Object({ cheeseId: Type.Integer({ minimum: 1, format: 'int64' }), quantity: Type.Integer({ minimum: 1, maximum: 100, description: 'Whole kilograms.' }) }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
    shippingAddress: AddressA,
    notes: Type.Optional(Nullable(Text(500))),
  },
  { additionalProperties: false, examples: [{ items: [{ cheeseId: 1, quantity: 2 }], shippingAddress: { street: '12 rue des Fromagers', city: 'Lyon', zipCode: '69002', country: 'FR' }, notes: 'Leave with the concierge' }] },
);
export type StoreOrderBody = Type.Static<typeof StoreOrderInput>;

const AddressB = Type.Object(
  { line1: Text(200), city: Text(100), region: Type.Optional(Nullable(Text(100))), postalCode: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{0,11}$' }))), country: Country },
  { additionalProperties: false },
);

/** Form B's order body: cheeses by id or slug, kilograms in steps of 0.05, a shipping method. */
export const OrderInput = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          cheeseId: Type.Union([Type.String({ pattern: ID_OR_SLUG_PATTERN }), Type.Integer({ minimum: 1 })], { description: 'The cheese\'s id or slug.' }),
          quantity_kg: Type.Number({ minimum: 0.1, maximum: 100, multipleOf: 0.05, description: '0.1 to 100 kg, a multiple of 0.05.' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100, description: 'One line per cheese: a cheese given twice is refused (422), so no quantity is silently summed.' },
    ),
    shipping: Type.Object({ method: Type.Enum([...SHIPPING_METHODS]), address: AddressB }, { additionalProperties: false }),
    notes: Type.Optional(Nullable(Text(500))),
  },
  { additionalProperties: false, examples: [{ items: [{ cheeseId: 'comte-24-mois', quantity_kg: 0.5 }], shipping: { method: 'temperature_controlled', address: { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' } } }] },
);
export type OrderInputBody = Type.Static<typeof OrderInput>;

/** JSON merge patch (RFC 7396) of an order. */
export const OrderPatch = Type.Object(
  {
    notes: Type.Optional(Nullable(Text(500))),
    shippingAddress: Type.Optional(Type.Partial(AddressA, { additionalProperties: false, minProperties: 1 })),
    status: Type.Optional(Type.Enum(['approved', 'shipped', 'delivered', 'cancelled'], { description: 'Staff only (`admin`): drives the lifecycle; an illegal transition is 409.' })),
    carrier: Type.Optional(Text(100)),
    trackingNumber: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9-]{4,40}$' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type OrderPatchBody = Type.Static<typeof OrderPatch>;

export const OrderList = Type.Object(
  { items: Type.Array(Order), hasMore: Type.Boolean(), nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page (older orders).' })) },
  { $id: 'OrderList' },
);
