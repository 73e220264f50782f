import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Rolling API keys (issue 19, the dashboard's "Roll"): `key_last4`, the key's last 4
 * characters, shown with its prefix (null for keys made before: their end was never kept);
 * `rolled_at`, when a roll replaced the key. A rolled key works until its (shortened)
 * `expires_at` but no longer counts against the 3 active keys (decisions.md "Issue 19").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.alterTable('api_keys').addColumn('key_last4', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('rolled_at', t.timestamp).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('rolled_at').execute();
  await db.schema.alterTable('api_keys').dropColumn('key_last4').execute();
}
