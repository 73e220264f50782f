import { EVENT_DATA_SCHEMAS, Metadata } from './event-data.schema.js';
import { sampleEnvelopes } from './event-samples.js';
import { EVENT_TYPES, type EventType } from './outbox.writer.js';

/** `order.placed` → `OrderPlaced`: the kind's name in component names. */
export function kindName(type: EventType): string {
  return type.replace(/(^|[._])(.)/g, (_m, _sep: string, c: string) => c.toUpperCase());
}

/** The component holding a kind's envelope (what a webhook delivery carries), e.g. `OrderPlacedEnvelope`. */
export const envelopeId = (type: EventType) => `${kindName(type)}Envelope`;

const EVENT_ID = { type: 'string', pattern: '^evt_[0-9a-f]{32}$', description: 'The event id: the same on every attempt, replay and read of the log. Events recorded since 2.5 have time-ordered ids (a UUIDv7\'s hex digits).' };

/**
 * Every kind's envelope, as one schema each: the webhooks section (webhook.openapi.ts) and
 * the event log's `Event` refer to these, so the two never differ. Open here (no
 * `additionalProperties`): each use closes it with `unevaluatedProperties: false`, which is
 * what lets the log's events add `pending_webhooks` through `allOf`.
 */
export function envelopeSchemas(): Record<string, unknown>[] {
  return EVENT_TYPES.map((type) => ({
    $id: envelopeId(type),
    type: 'object',
    description: `The \`${type}\` event's envelope, byte for byte what a webhook delivery's body and the event log carry.`,
    required: ['id', 'type', 'created_at', 'data', 'metadata'],
    properties: {
      id: EVENT_ID,
      type: { type: 'string', const: type },
      created_at: { type: 'string', format: 'date-time', description: 'When the event was recorded, in the transaction of the change. For display: the log\'s order is commit order, which this may not follow by a few milliseconds.' },
      data: EVENT_DATA_SCHEMAS[type],
      metadata: Metadata,
    },
    examples: sampleEnvelopes(type).slice(0, 1),
  }));
}

