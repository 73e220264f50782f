import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * What the authorization server issues. A grant is one consent (or one client-credentials
 * exchange): its codes, access tokens and refresh tokens hang off it, so revoking the grant
 * (reuse of a rotated refresh token or of a code, RFC 9700 §4.14.2) revokes the whole family.
 * Deleting the account or the client deletes its grants and their tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('oauth_grants'))
    .addColumn('client_id', t.bigint, (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('account_id', t.bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('revoked_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_grants_account').on('oauth_grants').column('account_id').execute();
  await t
    .idColumn(db.schema.createTable('oauth_tokens'))
    .addColumn('grant_id', t.bigint, (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    // authorization_code, access_token or refresh_token
    .addColumn('kind', 'text', (c) => c.notNull())
    // SHA-256 of the token, hex: the token itself is never stored.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    // A code exchanged, a refresh token rotated: presenting it again is reuse.
    .addColumn('consumed_at', t.timestamp)
    .addColumn('revoked_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_tokens_grant').on('oauth_tokens').column('grant_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_tokens').execute();
  await db.schema.dropTable('oauth_grants').execute();
}
