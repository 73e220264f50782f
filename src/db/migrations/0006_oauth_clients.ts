import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/** OAuth 2.0 clients registered by staff (the authorization server's flows build on them). */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('oauth_clients'))
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    // SHA-256 of the secret (confidential clients only); the secret itself is shown once.
    .addColumn('secret_hash', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('client_type', 'text', (c) => c.notNull())
    // JSON array of exact redirect URIs; space-separated grants and scopes, as OAuth writes them.
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('grants', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_by', t.bigint, (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_clients').execute();
}
