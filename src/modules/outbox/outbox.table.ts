import type { Generated } from 'kysely';
import { tableColumns } from '../../db/table-columns.js';
import type { Id, Timestamp } from '../../db/columns.js';

export interface OutboxTable {
  id: Id;
  /** The envelope id (`evt_` + a UUIDv7's 32 hex digits, so its time can be read back) receivers use for idempotency. */
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
  /** The `CHEESE_ENV` of the deployment that recorded it. */
  environment: string;
  created_at: Timestamp;
  /** PostgreSQL: the writing transaction's id (the column's default); SQLite: 0. The log's order is (txid, id). */
  txid: Generated<number>;
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
  environment: 'not null',
  created_at: 'not null',
  txid: 'not null',
});

/** Each consumer's position in the log: the last (txid, id) it has passed. */
export interface OutboxConsumerTable {
  name: string;
  position_txid: number;
  position_id: number;
  updated_at: Timestamp;
}
export const OUTBOX_CONSUMER_COLUMNS = tableColumns<OutboxConsumerTable>()({
  name: 'not null',
  position_txid: 'not null',
  position_id: 'not null',
  updated_at: 'not null',
});
