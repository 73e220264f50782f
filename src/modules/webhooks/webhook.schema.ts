import Type from 'typebox';
import { SCOPES } from '../../kernel/scopes.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';
import { EVENT_PATTERN } from './webhook.rules.js';

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

export const TestResult = Type.Object({
  eventId: Type.String(),
  outcome: Type.Enum(['delivered', 'dead_lettered']),
  statusCode: Nullable(Type.Integer()),
  latencyMs: Type.Integer(),
  error: Nullable(Type.String()),
});

export const ReplayInput = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Only events from this time (inclusive).' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Only events before this time.' })),
  },
  { additionalProperties: false },
);
