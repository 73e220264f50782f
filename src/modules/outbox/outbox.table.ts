import type { Id, NullableTimestamp, Timestamp } from '../../db/columns.js';

export interface OutboxTable {
  id: Id;
  /** The envelope id (`evt_…`) receivers use for idempotency. */
  event_id: string;
  type: string;
  aggregate_type: string;
  aggregate_id: string;
  /** JSON object: the envelope's `data`, snake_case. */
  data: string;
  /** JSON object: the envelope's `metadata`. */
  metadata: string;
  created_at: Timestamp;
  /** Set by the dispatcher (a later issue) once fanned out to webhooks. */
  dispatched_at: NullableTimestamp;
}
