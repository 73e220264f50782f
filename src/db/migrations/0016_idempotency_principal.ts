import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Who may be answered with a stored reply, and whose data it holds (issue 16 §2): the
 * credential that made the first request (`api_key:12`, `login_token:3`, `oauth_token:9`,
 * `anonymous`), and the account whose data the reply holds, so that deleting the account
 * erases its replies in the same transaction (ON DELETE CASCADE). `reply_withheld`: the reply
 * held a secret, which is never stored.
 *
 * Replies stored before this migration are unowned and may hold secrets (`sk_…`, `whsec_…`)
 * or personal data: they are deleted. A request still running keeps its key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await db.deleteFrom('idempotency_keys' as never).where('state' as never, '=', 'done' as never).execute();
  await db.schema.alterTable('idempotency_keys').addColumn('credential', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('account_id', t.bigint, (c) => c.references('accounts.id').onDelete('cascade')).execute();
  await db.schema.alterTable('idempotency_keys').addColumn('reply_withheld', t.boolean, (c) => c.notNull().defaultTo(t.postgres ? false : 0)).execute();
  await db.schema.createIndex('idempotency_keys_account').on('idempotency_keys').column('account_id').execute();
}
