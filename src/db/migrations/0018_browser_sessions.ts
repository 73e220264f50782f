import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Browser sign-ins (the developer dashboard, decisions.md "Issue 19"): a random token in an
 * HttpOnly cookie, kept here only as its SHA-256. `authenticated_at` is the last time the
 * password was given (sign-in or step-up); `last_seen_at` bounds the idle expiry and
 * `expires_at` the absolute one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('browser_sessions'))
    .addColumn('account_id', t.bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('authenticated_at', t.timestamp, (c) => c.notNull())
    .addColumn('last_seen_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('browser_sessions_account_idx').on('browser_sessions').column('account_id').execute();
  await db.schema.createIndex('browser_sessions_expiry_idx').on('browser_sessions').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('browser_sessions').execute();
}
