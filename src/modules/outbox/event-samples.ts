import { createHash } from 'node:crypto';
import type { CheeseEnv } from '../../kernel/environment.js';
import { EVENT_DATA_SCHEMAS } from './event-data.schema.js';
import type { EventType } from './outbox.writer.js';

/**
 * Example envelopes of every event kind, built from the `examples` of the data schemas
 * (event-data.schema.ts): what docs/events.md shows (scripts/events.ts) and what the
 * dashboard's Events page shows, from this one builder. Deterministic: the id and request id
 * are digests of the kind and data, the time and version fixed, so the document never drifts.
 */
export interface SampleEnvelope {
  id: string;
  type: EventType;
  created_at: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export interface SampleOptions {
  /** `metadata.api_version`; the reference's fixed value unless given. */
  apiVersion?: string;
  /** `metadata.environment`; `production` (the reference's) unless given. */
  environment?: CheeseEnv;
}

export const SAMPLE_API_VERSION = '2.4.0';
export const SAMPLE_CREATED_AT = '2026-06-12T10:15:00.000Z';

/** Order events as the worker records them (no request), the others as a request does; sequences as in a real order's life. */
const SEQUENCE: Partial<Record<EventType, number>> = { 'order.placed': 1, 'order.confirmed': 2, 'order.shipped': 3, 'order.delivered': 4, 'order.cancelled': 2 };
const BY_JOB = new Set<EventType>(['order.confirmed', 'order.shipped', 'order.delivered', 'api_key.expiring']);

/** What the event is about, as the emitting code names it (aggregate type and id). */
function objectOf(type: EventType, data: Record<string, unknown>): { object_type: string; object_id: unknown } {
  const objectType = type.slice(0, type.indexOf('.'));
  return { object_type: objectType, object_id: data[`${objectType}_id`] };
}

/** The envelope an event of `type` with this `data` is delivered in. */
export function sampleEnvelope(type: EventType, data: Record<string, unknown>, options: SampleOptions = {}): SampleEnvelope {
  const hash = createHash('sha256').update(`${type}:${JSON.stringify(data)}`).digest('hex');
  const byJob = BY_JOB.has(type) || data.reason === 'season_opened';
  // Catalogue events are public: they never carry the request that caused them (event-access.rules.ts).
  const ownRequest = !byJob && !type.startsWith('cheese.');
  const requestId = `${hash.slice(32, 40)}-${hash.slice(40, 44)}-4${hash.slice(45, 48)}-a${hash.slice(49, 52)}-${hash.slice(52, 64)}`;
  const sequence = SEQUENCE[type];
  return {
    id: `evt_${hash.slice(0, 32)}`,
    type,
    created_at: SAMPLE_CREATED_AT,
    data,
    metadata: {
      api_version: options.apiVersion ?? SAMPLE_API_VERSION,
      environment: options.environment ?? 'production',
      request_id: ownRequest ? requestId : null,
      idempotency_key: type === 'order.placed' ? `order-${hash.slice(24, 32)}` : null,
      ...objectOf(type, data),
      ...(sequence === undefined ? {} : { sequence, order_id: data.order_id }),
    },
  };
}

/** One envelope per example of the kind's data schema (two for a kind of two shapes). */
export function sampleEnvelopes(type: EventType, options: SampleOptions = {}): SampleEnvelope[] {
  const examples = ((EVENT_DATA_SCHEMAS[type] as { examples?: unknown[] }).examples ?? []) as Record<string, unknown>[];
  return examples.map((example) => sampleEnvelope(type, example, options));
}
