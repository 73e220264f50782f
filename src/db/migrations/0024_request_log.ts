import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * The request log (issue 30): a row per /v2 request an account made, written in batches by
 * each instance and pruned after REQUEST_LOG_RETENTION_DAYS. Lists read it newest first per
 * account, or forward from an id (the long poll); the request id finds one entry.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('request_logs'))
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('account_id', t.bigint, (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'real', (c) => c.notNull())
    .addColumn('credential_kind', 'text', (c) => c.notNull())
    .addColumn('credential_label', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('client_ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('request_headers', 'text', (c) => c.notNull())
    .addColumn('response_headers', 'text', (c) => c.notNull())
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
  // An account's entries newest first (and forward from an id); staff read by id alone; one
  // request by its id. No index on created_at: every index is paid by every request, and the
  // prune walks the oldest ids instead (ids follow arrival).
  await db.schema.createIndex('request_logs_account_idx').on('request_logs').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('request_logs_request_idx').on('request_logs').column('request_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_logs').execute();
}
