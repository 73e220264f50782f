import Type from 'typebox';
import { envelopeId, EVENT_TYPES, kindName, sampleEnvelopes, type EventType } from '../outbox/outbox.module.js';

export { envelopeSchemas } from '../outbox/outbox.module.js';

/** The component of a kind as the event log answers it (the envelope and `pending_webhooks`), e.g. `OrderPlacedEvent`. */
export const eventId = (type: EventType) => `${kindName(type)}Event`;


const PENDING_WEBHOOKS = Type.Integer({
  minimum: 0,
  description: 'How many of the caller\'s webhooks (staff: every webhook) have not answered this event with a 2xx yet: deliveries pending or dead-lettered. 0 once every one has, and for an event no webhook subscribed to.',
});

/** A kind as the event log answers it: its envelope and `pending_webhooks`. */
export function eventSchemas(): Record<string, unknown>[] {
  return EVENT_TYPES.map((type) => ({
    $id: eventId(type),
    type: 'object',
    allOf: [{ $ref: `${envelopeId(type)}#` }],
    required: ['pending_webhooks'],
    properties: { pending_webhooks: PENDING_WEBHOOKS },
    unevaluatedProperties: false,
    examples: sampleEnvelopes(type).slice(0, 1).map((envelope) => ({ ...envelope, pending_webhooks: 0 })),
  }));
}

/** `Event`: one of every kind, told apart by `type`. */
export const EventUnion = {
  $id: 'Event',
  description: 'An event of the log: the webhook envelope of its kind (byte for byte), and `pending_webhooks`. Switch on `type`; every kind and its `data` are in docs/events.md.',
  oneOf: EVENT_TYPES.map((type) => ({ $ref: `${eventId(type)}#` })),
  discriminator: { propertyName: 'type', mapping: Object.fromEntries(EVENT_TYPES.map((type) => [type, `#/components/schemas/${eventId(type)}`])) },
};

const EventRef = Type.Unsafe<Record<string, unknown>>({ $ref: 'Event#' });

export const EventPage = Type.Object(
  {
    items: Type.Array(EventRef, { description: 'Newest first (`order=asc`: oldest first).' }),
    hasMore: Type.Boolean(),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null exactly when `hasMore` is false.' }),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description:
        'Polling forward (`order=asc`): pass as `after` in the next poll to go on exactly where this page ended: the last event\'s id, or, when the page is empty, an opaque position (`pos_…`) of where it looked (so `after=now` with nothing new still gives a place to go on from). Null when newest first, and when an empty page started from the beginning of the log.',
      examples: ['evt_5f0c1c7e0e4a4f0b9a7e3c2d1b0a9f8e'],
    }),
  },
  { additionalProperties: false },
);
export { EventRef };

const listParam = (description: string) =>
  Type.Union([Type.String({ minLength: 1, maxLength: 1000 }), Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20 })], {
    description: `${description} Comma-separated or repeated; at most 20.`,
  });

export const EventListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Events per page, 1 to 100.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: '`nextCursor` of the previous page, unchanged, with the same filters (another filter is a 400).' })),
    type: Type.Optional(listParam('Kinds (`order.placed`) or wildcards (`order.*`, `*`). A kind or wildcard matching no kind is a 400; a kind your credential may not read is a 403.')),
    created_gte: Type.Optional(Type.String({ format: 'date-time', description: 'Recorded at or after this instant (ISO 8601 with a time zone).' })),
    created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'Recorded before this instant.' })),
    object_type: Type.Optional(Type.Enum(['order', 'cheese', 'customer', 'api_key', 'webhook'], { description: 'Only events about objects of this type (`metadata.object_type`).' })),
    object_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only events about this object (`metadata.object_id`); needs `object_type`.' })),
    delivery_success: Type.Optional(Type.Literal('false', { description: '`false`: only events that some webhook of yours has not answered with a 2xx yet (`pending_webhooks` > 0): every such event, page by page. `true` is refused (every event without a pending delivery would match: list without the filter).' })),
    order: Type.Optional(Type.Enum(['desc', 'asc'], { description: '`desc`: newest first (the default without `after`). `asc`: oldest first, for polling forward (the default with `after`).' })),
    after: Type.Optional(
      Type.String({
        pattern: '^(?:evt_[0-9a-f]{32}|now|pos_[A-Za-z0-9_-]{1,300}\\.[A-Za-z0-9_-]{1,64})$',
        description:
          'Polls forward (`order=asc`, the default with it): the events after this one, in commit order. `now`: only events that become visible after this request (the log\'s current head). `pos_…`: the `nextAfter` of an earlier empty page. An event id you cannot see (or that never existed) is a 404; one past `EVENT_RETENTION_DAYS` is a 410.',
      }),
    ),
    wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 25,
        description:
          'Long poll, with `after`: when no event past `after` is visible, hold the request up to this many seconds until one is (it is answered within about half a second of its commit becoming visible), then answer the page; at the end of the wait, an empty page (200, or 304 with a matching `If-None-Match`). The same filters apply while held. 0 (default): answer at once. Held requests count against a limit per account and instance (`EVENTS_MAX_HELD_PER_ACCOUNT`, 100 by default): past it a 429; an instance shutting down answers them at once.',
        examples: [25],
      }),
    ),
  },
  { additionalProperties: false },
);

export const EventIdParams = Type.Object({ id: Type.String({ pattern: '^evt_[0-9a-f]{32}$', description: 'The event id.' }) });
