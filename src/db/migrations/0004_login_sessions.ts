import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * One row per login token issued by POST /customer/login. The token is a signed JWT naming
 * its session; the row is what logout and account deletion revoke, so a revoked token is
 * refused on every instance.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('login_sessions'))
    .addColumn('account_id', t.bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('revoked_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_sessions_account_idx').on('login_sessions').column('account_id').execute();
  await db.schema.createIndex('login_sessions_expiry_idx').on('login_sessions').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('login_sessions').execute();
}
