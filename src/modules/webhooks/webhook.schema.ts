import Type from 'typebox';
import { SCOPES } from '../../kernel/scopes.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';
import { EVENT_PATTERN } from './webhook.rules.js';
import { ERROR_CLASSES } from './webhook.table.js';

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

const EventPattern = Type.String({
  pattern: EVENT_PATTERN,
  maxLength: 100,
  description: 'An event kind (`order.shipped`), a group (`order.*`) or every kind you may receive (`*`).',
  examples: ['order.*'],
});

const WebhookFields = {
  url: Type.String({ minLength: 1, maxLength: 2000, format: 'uri', description: 'Where deliveries are POSTed: http(s), no credentials, no fragment. Production refuses loopback, private and link-local targets.' }),
  events: Type.Array(EventPattern, { minItems: 1, maxItems: 20, uniqueItems: true }),
  description: Nullable(Type.String({ minLength: 1, maxLength: 500, pattern: VISIBLE_TEXT_PATTERN })),
  maxAttempts: Type.Union([Type.Literal(5), Type.Literal(6)], { description: 'Attempts before an event is dead-lettered: 6 (the schedule), or 5 (the 2.3.0 revision).' }),
};

export const Webhook = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    ...WebhookFields,
    owner: Type.String({ description: 'The username of the account it belongs to.' }),
    scopes: Type.Array(Type.Enum([...SCOPES]), { description: 'The scopes of the credential that chose `events`: they decide what is delivered (`admin`: every account\'s events).' }),
    active: Type.Boolean({ description: 'False while paused (PATCH), or after the receiver answered 410 Gone (see `disabledReason`). Events are not fanned out to an inactive webhook.' }),
    disabledReason: Nullable(Type.String()),
    previousSecretExpiresAt: Nullable(Type.String({ format: 'date-time', description: 'After a rotation, the old secret also signs until then.' })),
    oauthClientId: Nullable(
      Type.String({
        description:
          'The OAuth app (its `clientId`, `cl_…`) whose access token created this webhook: it lives only as long as that authorization, and is deleted with its pending deliveries when the grant ends (the customer revokes the app, changes or resets the password, the client is removed, or every token of the grant has expired: checked hourly). A client-credentials token is a grant of its own, so its webhook lives about as long as that token: register long-lived webhooks with an API key. Null: made by the account\'s own credential.',
        examples: ['cl_Qm9yZGVhdXhDaGVlc2UxMg'],
      }),
    ),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Webhook' },
);

export const CreatedWebhook = Type.Object(
  { ...Webhook.properties, secret: Type.String({ description: 'Signs every delivery; shown in this response only: store it now.', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }) },
  { $id: 'CreatedWebhook' },
);

export const WebhookInput = Type.Object(
  {
    url: WebhookFields.url,
    events: WebhookFields.events,
    description: Type.Optional(WebhookFields.description),
    maxAttempts: Type.Optional(WebhookFields.maxAttempts),
  },
  { additionalProperties: false, examples: [{ url: 'https://shop.example/hooks/fromagerie', events: ['order.*', 'cheese.back_in_stock'], description: 'Order updates for the shop' }] },
);

export const WebhookPatch = Type.Object(
  {
    url: Type.Optional(WebhookFields.url),
    events: Type.Optional(WebhookFields.events),
    description: Type.Optional(WebhookFields.description),
    maxAttempts: Type.Optional(WebhookFields.maxAttempts),
    active: Type.Optional(Type.Boolean({ description: 'false pauses deliveries (they wait); true resumes them, also after a 410.' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ active: false }] },
);

export const WebhookAttempt = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    deliveryId: Type.Integer({ format: 'int64' }),
    eventId: Type.String({ examples: ['evt_0b9c5d1e2f3a4b5c6d7e8f9a0b1c2d3e'] }),
    eventType: Type.String({ examples: ['order.shipped'] }),
    attempt: Type.Integer({ minimum: 1, description: 'Also sent as X-Cheese-Delivery-Attempt.' }),
    outcome: Type.Enum(['delivered', 'failed', 'dead_lettered'], { description: '`failed`: another attempt follows at `nextAttemptAt`; `dead_lettered`: it was the last (replay it).' }),
    statusCode: Nullable(Type.Integer({ description: 'The receiver\'s status; null when none came (timeout, refused connection).' })),
    latencyMs: Type.Integer(),
    error: Nullable(Type.String()),
    nextAttemptAt: Nullable(DateTime),
    createdAt: DateTime,
  },
  { $id: 'WebhookAttempt' },
);

export const WebhookAttemptDetail = Type.Object(
  {
    ...WebhookAttempt.properties,
    errorClass: Nullable(Type.Enum([...ERROR_CLASSES], { description: 'Why it failed, as a class: `http_error` (answered 4xx or 5xx), `redirect` (3xx, not followed), `timeout`, `connection_refused`, `connection_reset`, `dns`, `tls`, `address_refused` (an address webhooks may not reach), `network`; null when delivered.' })),
    deliveryState: Type.Enum(['pending', 'delivered', 'dead'], { description: 'Its delivery now: `pending` (an attempt is to come, or a replay), `delivered`, `dead` (dead-lettered: replay it).' }),
    request: Type.Object({
      headers: Nullable(Type.Record(Type.String(), Type.String(), { description: 'Every header sent, signatures included (never the secret). Null for attempts made before the headers were kept.' })),
      body: Type.String({ description: 'The body sent, byte for byte the same on every attempt and replay of the event.' }),
    }),
    response: Type.Object({
      statusCode: Nullable(Type.Integer()),
      body: Nullable(Type.String({ description: 'The first 4 KB of the answer, as UTF-8 text; null when no answer came, or for attempts made before the answers were kept.' })),
    }),
  },
  { $id: 'WebhookAttemptDetail' },
);

export const WebhookDeadLetter = Type.Object(
  {
    deliveryId: Type.Integer({ format: 'int64', description: 'Names it in POST /webhooks/dead-letters/replay.' }),
    webhookId: Type.Integer({ format: 'int64' }),
    webhookUrl: Type.String(),
    owner: Type.String({ description: 'The username of the account the webhook belongs to.' }),
    eventId: Type.String({ examples: ['evt_0b9c5d1e2f3a4b5c6d7e8f9a0b1c2d3e'] }),
    eventType: Type.String({ examples: ['order.shipped'] }),
    attempts: Type.Integer({ description: 'Attempts made before it was dead-lettered.' }),
    deadLetteredAt: DateTime,
    lastStatusCode: Nullable(Type.Integer({ description: 'The receiver\'s status at the last attempt; null when none came.' })),
    lastError: Nullable(Type.String()),
  },
  { $id: 'WebhookDeadLetter' },
);

export const TestResult = Type.Object({
  eventId: Type.String(),
  outcome: Type.Enum(['delivered', 'dead_lettered']),
  statusCode: Nullable(Type.Integer()),
  latencyMs: Type.Integer(),
  error: Nullable(Type.String()),
});

const EventId = Type.String({ pattern: '^evt_[0-9a-f]{32}$', maxLength: 36 });
const RowId = (description?: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, format: 'int64', ...(description && { description }) });

/** Query parameters (the operations take no body, so a client sending an empty JSON body keeps working). */
export const ReplayInput = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Only events from this time (inclusive).' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Only events before this time.' })),
    eventIds: Type.Optional(Type.Array(EventId, { minItems: 1, maxItems: 100, description: 'Only these events (at most 100; repeat the parameter), delivered or dead-lettered.' })),
  },
  { additionalProperties: false },
);

export const DeadLetterQuery = Type.Object(
  {
    webhookId: Type.Optional(RowId('Only this webhook\'s.')),
    account: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Staff: only this account\'s webhooks (a username, in any case). Anyone else naming another account gets none.' })),
  },
  { additionalProperties: false },
);

export const DeadLetterReplayInput = Type.Object(
  {
    ...DeadLetterQuery.properties,
    deliveryIds: Type.Optional(Type.Array(RowId(), { minItems: 1, maxItems: 100, description: 'Only these dead-lettered deliveries (at most 100; repeat the parameter); without it, every one in scope.' })),
  },
  { additionalProperties: false },
);
