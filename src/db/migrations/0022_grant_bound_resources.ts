import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';
import { systemClock } from '../../kernel/clock.js';

/**
 * What a third-party app leaves behind (issue 28, decisions.md "Issue 28").
 *
 * - `webhooks.oauth_grant_id`: the OAuth grant whose access token created the webhook (null: the
 *   account's own credential did). The webhooks module deletes such a webhook in the transaction
 *   that revokes the grant; deleting the grant row (its client's or account's deletion, the
 *   token-pruning job) deletes it through the foreign key. `oauth_client_id`: that grant's
 *   client's public id (`cl_…`), shown in the webhook's JSON, kept here so webhooks never read
 *   oauth's tables. Webhooks made by an app before this migration cannot be told apart (nothing
 *   recorded the credential that made them): they stay unbound.
 * - API keys an OAuth access token made (allowed until now) are revoked. Nothing recorded the
 *   creating credential either; what the data allows: a key that is unrevoked and not yet
 *   expired, created while an access token of the same account was alive (created, not
 *   expired, not revoked yet), and expiring no later than that token (a key never outlived its
 *   creator, and a key made by a token without `expiresAt` took the token's expiry). A key a
 *   login token made with a short expiry inside such a window is revoked too (it would have
 *   expired within the hour anyway); a key rolled from such a key is not linked to it and stays.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .alterTable('webhooks')
    .addColumn('oauth_grant_id', t.bigint, (c) => c.references('oauth_grants.id').onDelete('cascade'))
    .execute();
  await db.schema.alterTable('webhooks').addColumn('oauth_client_id', 'text').execute();
  await db.schema.createIndex('webhooks_oauth_grant_idx').on('webhooks').column('oauth_grant_id').execute();

  const now = systemClock.iso();
  await sql`update api_keys set revoked_at = ${now}, updated_at = ${now}
            where revoked_at is null
              and expires_at is not null and expires_at > ${now}
              and exists (
                select 1 from oauth_tokens tok join oauth_grants g on g.id = tok.grant_id
                where g.account_id = api_keys.account_id
                  and tok.kind = 'access_token'
                  and tok.created_at <= api_keys.created_at
                  and api_keys.created_at <= tok.expires_at
                  and (tok.revoked_at is null or tok.revoked_at >= api_keys.created_at)
                  and api_keys.expires_at <= tok.expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhooks_oauth_grant_idx').execute();
  await db.schema.alterTable('webhooks').dropColumn('oauth_client_id').execute();
  await db.schema.alterTable('webhooks').dropColumn('oauth_grant_id').execute();
}
