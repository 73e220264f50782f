import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * A secret the dashboard shows once (a new key, a webhook or client secret) travels to its page
 * in a cookie sealed to the session; this table makes "once" the server's word. A row per
 * reveal: only the SHA-256 of its random id (the id is inside the sealed cookie), its session,
 * its end and when a page consumed it. Never the secret. A consumed or expired row opens
 * nothing; rows past their end are pruned hourly, and go with their session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('dashboard_reveals'))
    .addColumn('reveal_hash', 'text', (c) => c.notNull().unique())
    .addColumn('session_id', t.bigint, (c) => c.notNull().references('browser_sessions.id').onDelete('cascade'))
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('consumed_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboard_reveals_session_idx').on('dashboard_reveals').column('session_id').execute();
  await db.schema.createIndex('dashboard_reveals_expiry_idx').on('dashboard_reveals').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('dashboard_reveals').execute();
}
