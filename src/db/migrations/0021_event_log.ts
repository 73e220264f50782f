import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';
import { systemClock } from '../../kernel/clock.js';

/**
 * The event log (issue 21): the outbox becomes a log read in commit order by any number of
 * consumers, each keeping its own position, instead of rows marked `dispatched_at` by one.
 *
 * - `txid`: on PostgreSQL the id of the transaction that wrote the row. Ids are taken before
 *   commit, so id order is not commit order; a reader serves only rows whose `txid` is below
 *   `pg_snapshot_xmin(pg_current_snapshot())` (every transaction that could still commit a
 *   lower row has ended) and orders by (txid, id). SQLite has one writer: 0 for every row,
 *   and id order is commit order.
 * - `environment`: the deployment's CHEESE_ENV that recorded it (was only in the metadata),
 *   so the log serves a deployment only its own events.
 * - `outbox_consumers`: each consumer's position, a (txid, id) pair it has passed.
 *
 * Rows written before keep txid 0 if they were fanned out (and the 'webhooks' consumer starts
 * past the last of them), 1 if not: on PostgreSQL an undispatched row may have a lower id than
 * a dispatched one (it committed late), and txid 1 puts it ahead of the position, so it is
 * fanned out once, not lost, and nothing already fanned out is fanned out again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.alterTable('outbox').addColumn('txid', t.bigint, (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('outbox').addColumn('environment', 'text', (c) => c.notNull().defaultTo('development')).execute();
  const environment = t.postgres ? sql`(metadata::jsonb ->> 'environment')` : sql`json_extract(metadata, '$.environment')`;
  await sql`update outbox set environment = coalesce(${environment}, 'development')`.execute(db);
  // Every event's metadata names its object and the request's Idempotency-Key (null before): appended as text, so the
  // bytes already there (and so every earlier delivery's body up to here) stay as they were.
  const quote = (column: string) => (t.postgres ? sql`to_json(${sql.ref(column)})::text` : sql`json_quote(${sql.ref(column)})`);
  await sql`update outbox set metadata = substr(metadata, 1, length(metadata) - 1)
              || ',"idempotency_key":null,"object_type":' || ${quote('aggregate_type')} || ',"object_id":' || ${quote('aggregate_id')} || '}'
            where metadata not like '%"object_type"%'`.execute(db);
  if (t.postgres) {
    await sql`update outbox set txid = 1 where dispatched_at is null`.execute(db);
    await sql`alter table outbox alter column txid set default (pg_current_xact_id()::text::bigint)`.execute(db);
    // The writer always names it: a default would only hide a row written without it.
    await sql`alter table outbox alter column environment drop default`.execute(db);
  }

  await db.schema
    .createTable('outbox_consumers')
    .addColumn('name', 'text', (c) => c.primaryKey().notNull())
    .addColumn('position_txid', t.bigint, (c) => c.notNull())
    .addColumn('position_id', t.bigint, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  // Past the last row fanned out; on SQLite no undispatched row has a lower id (one writer, claimed in id order).
  await sql`insert into outbox_consumers (name, position_txid, position_id, updated_at)
            select 'webhooks', 0, coalesce(max(id), 0), ${systemClock.iso()} from outbox where dispatched_at is not null`.execute(db);

  await db.schema.dropIndex('outbox_undispatched_idx').execute();
  await db.schema.alterTable('outbox').dropColumn('dispatched_at').execute();
  await db.schema.createIndex('outbox_log_idx').on('outbox').columns(['txid', 'id']).execute();
  await db.schema.createIndex('outbox_object_idx').on('outbox').columns(['aggregate_type', 'aggregate_id', 'txid', 'id']).execute();
  await db.schema.createIndex('outbox_created_idx').on('outbox').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.dropIndex('outbox_created_idx').execute();
  await db.schema.dropIndex('outbox_object_idx').execute();
  await db.schema.dropIndex('outbox_log_idx').execute();
  await db.schema.alterTable('outbox').addColumn('dispatched_at', t.timestamp).execute();
  // Everything the fan-out has passed counts as dispatched.
  await sql`update outbox set dispatched_at = created_at
            where exists (select 1 from outbox_consumers c where c.name = 'webhooks'
                          and (outbox.txid < c.position_txid or (outbox.txid = c.position_txid and outbox.id <= c.position_id)))`.execute(db);
  await db.schema.createIndex('outbox_undispatched_idx').on('outbox').columns(['dispatched_at', 'id']).execute();
  await db.schema.dropTable('outbox_consumers').execute();
  await db.schema.alterTable('outbox').dropColumn('environment').execute();
  await db.schema.alterTable('outbox').dropColumn('txid').execute();
}
