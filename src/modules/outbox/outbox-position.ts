import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';

/** A place in the log: rows are in (txid, id) order, which is commit order on both dialects. */
export interface LogPosition {
  txid: number;
  id: number;
}

/** An outbox row as its readers see it: the envelope's fields (data and metadata as stored JSON text) and its place. */
export interface OutboxRecord {
  outboxId: number;
  txid: number;
  eventId: string;
  type: string;
  audience: string;
  environment: string;
  aggregateType: string;
  aggregateId: string;
  createdAt: string;
  data: string;
  metadata: string;
}

export const RECORD_COLUMNS = ['id', 'txid', 'event_id', 'type', 'audience', 'environment', 'aggregate_type', 'aggregate_id', 'created_at', 'data', 'metadata'] as const;

export function recordOf(row: {
  id: number; txid: number; event_id: string; type: string; audience: string; environment: string; aggregate_type: string; aggregate_id: string; created_at: Date | string; data: string; metadata: string;
}): OutboxRecord {
  return {
    outboxId: Number(row.id),
    txid: Number(row.txid),
    eventId: row.event_id,
    type: row.type,
    audience: row.audience,
    environment: row.environment,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    createdAt: toIso(row.created_at),
    data: row.data,
    metadata: row.metadata,
  };
}

/** Rows strictly after (`>`) or before (`<`) a position in (txid, id) order. */
export function beyond(eb: ExpressionBuilder<DB, 'outbox'>, direction: '>' | '<', position: LogPosition): Expression<SqlBool> {
  return eb(eb.refTuple('outbox.txid', 'outbox.id'), direction, eb.tuple(position.txid, position.id));
}

/**
 * Rows no transaction can still precede. PostgreSQL takes ids (and the row's txid) before
 * commit: a row of a transaction still open may commit later with a lower (txid, id) than rows
 * already visible. Below the oldest transaction still running (`pg_snapshot_xmin`, taken by
 * the same statement's snapshot) every row is final, so a reader that moves forward through
 * this prefix never skips one. SQLite has one writer: every committed row is final.
 */
export function settled(eb: ExpressionBuilder<DB, 'outbox'>, postgres: boolean): Expression<SqlBool> {
  return postgres ? eb('outbox.txid', '<', sql<number>`pg_snapshot_xmin(pg_current_snapshot())::text::bigint`) : sql<SqlBool>`1 = 1`;
}
