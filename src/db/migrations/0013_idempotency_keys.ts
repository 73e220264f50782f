import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Idempotency-Key records (decisions.md §5): one per caller and key, shared by every instance.
 * The unique (scope, idempotency_key) decides a race between two requests with one key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('idempotency_keys'))
    // `account:<id>` for an authenticated caller, `address:<ip>` for an anonymous one
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    // SHA-256 of method, route, path parameters and body
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // running or done
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_headers', 'text')
    .addColumn('response_body', 'text')
    // A running request's lease: past it, a retry may take over (the first instance died).
    .addColumn('locked_until', t.timestamp, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('idempotency_keys_scope_key', ['scope', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
