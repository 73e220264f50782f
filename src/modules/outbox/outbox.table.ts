import { tableColumns } from '../../db/table-columns.js';
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
  /** Who may receive it: `public`, `account:<id>` (that account, and staff) or `staff`. */
  audience: string;
  created_at: Timestamp;
  /** Set by the dispatcher once fanned out to the webhooks subscribed to it. */
  dispatched_at: NullableTimestamp;
}
export const OUTBOX_COLUMNS = tableColumns<OutboxTable>()({
  id: 'not null',
  event_id: 'not null',
  type: 'not null',
  aggregate_type: 'not null',
  aggregate_id: 'not null',
  data: 'not null',
  metadata: 'not null',
  audience: 'not null',
  created_at: 'not null',
  dispatched_at: 'nullable',
});
