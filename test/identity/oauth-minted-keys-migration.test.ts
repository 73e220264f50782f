import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest, migrations } from '../../src/db/migrate.js';
import { openTestDatabase } from '../helpers/database.js';

/**
 * Migration 0022 revokes the API keys OAuth access tokens made while that was allowed (issue
 * 28 §2), as well as the data tells them apart: unrevoked, unexpired keys created during the
 * life of an access token of the same account and expiring no later than it. Keys of other
 * accounts, keys outliving every token, keys made outside a token's life and keys already
 * revoked or expired are left as they were. Webhooks gain their (null) grant binding.
 */
let database: Database;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ database, dispose } = await openTestDatabase());
});
afterAll(() => dispose());

const HOUR = 3_600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

describe('0022_grant_bound_resources', () => {
  it('revokes exactly the keys an OAuth token could have made, and binds no existing webhook', async () => {
    const db = database.db;
    const migrator = new Migrator({ db: db as never, provider: { getMigrations: async () => migrations }, ...(database.schema ? { migrationTableSchema: database.schema } : {}) });
    expect((await migrator.migrateTo('0021_event_log')).error).toBeUndefined();

    const account = async (username: string) =>
      Number((await db.insertInto('accounts').values({ username, username_key: username, password_hash: 'x', role: 'customer', plan: 'free', created_at: at(-48 * HOUR), updated_at: at(-48 * HOUR) } as never).returning('id').executeTakeFirstOrThrow()).id);
    const app = await account('app.user');
    const other = await account('other.user');
    const clientRow = Number(
      (await db.insertInto('oauth_clients').values({ client_id: 'cl_migration', secret_hash: null, name: 'App', client_type: 'public', redirect_uris: '[]', grants: 'authorization_code', scopes: 'read:profile write:profile', created_by: null, created_at: at(-48 * HOUR), updated_at: at(-48 * HOUR) } as never).returning('id').executeTakeFirstOrThrow()).id,
    );
    const grant = Number((await db.insertInto('oauth_grants').values({ client_id: clientRow, account_id: app, scopes: 'read:profile write:profile', created_at: at(-30 * 60_000) } as never).returning('id').executeTakeFirstOrThrow()).id);
    // An access token alive from 30 minutes ago to 30 minutes from now; a second one, revoked 20 minutes ago.
    const tokenExpiry = at(30 * 60_000);
    await db.insertInto('oauth_tokens').values({ grant_id: grant, kind: 'access_token', token_hash: 'h1', scopes: 'read:profile write:profile', expires_at: tokenExpiry, created_at: at(-30 * 60_000) } as never).execute();
    await db.insertInto('oauth_tokens').values({ grant_id: grant, kind: 'refresh_token', token_hash: 'h2', scopes: 'read:profile write:profile', expires_at: at(30 * 24 * HOUR), created_at: at(-30 * 60_000) } as never).execute();

    let n = 0;
    const key = async (accountId: number, fields: { created: string; expires: string | null; revoked?: string }) =>
      Number(
        (
          await db
            .insertInto('api_keys')
            .values({ account_id: accountId, name: null, key_prefix: `sk_test_${++n}`, key_hash: `hash${n}`, environment: 'test', scopes: 'read:profile', expires_at: fields.expires, revoked_at: fields.revoked ?? null, created_at: fields.created, updated_at: fields.created } as never)
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id,
      );
    // Made by the token, its expiry taken from it (no expiresAt given): revoked.
    const minted = await key(app, { created: at(-10 * 60_000), expires: tokenExpiry });
    // Made by the token with an earlier expiry: revoked.
    const mintedShorter = await key(app, { created: at(-5 * 60_000), expires: at(10 * 60_000) });
    // Outlives the token: not its doing (a key never outlived its creator).
    const outlives = await key(app, { created: at(-10 * 60_000), expires: at(2 * HOUR) });
    const never = await key(app, { created: at(-10 * 60_000), expires: null });
    // Made before the token lived.
    const before = await key(app, { created: at(-40 * 60_000), expires: at(10 * 60_000) });
    // Already revoked: left as it was.
    const revokedAt = at(-60_000);
    const alreadyRevoked = await key(app, { created: at(-10 * 60_000), expires: tokenExpiry, revoked: revokedAt });
    // Another account, same window: not the token's account.
    const otherAccount = await key(other, { created: at(-10 * 60_000), expires: tokenExpiry });
    // Expired already: it no longer authenticates, its state is left.
    const expired = await key(app, { created: at(-25 * 60_000), expires: at(-60_000) });
    const hook = Number(
      (await db.insertInto('webhooks').values({ account_id: app, url: 'https://example.com/h', events: '["order.*"]', description: null, max_attempts: 6, scopes: 'read:orders', active: true, disabled_reason: null, secret_ciphertext: 'c', created_at: at(-10 * 60_000), updated_at: at(-10 * 60_000) } as never).returning('id').executeTakeFirstOrThrow()).id,
    );

    await migrateToLatest(db as never, database.schema);

    const rows = await db.selectFrom('api_keys').select(['id', 'revoked_at']).orderBy('id').execute();
    const revoked = new Map(rows.map((row) => [Number(row.id), row.revoked_at === null ? null : new Date(row.revoked_at).toISOString()]));
    expect(revoked.get(minted)).not.toBeNull();
    expect(revoked.get(mintedShorter)).not.toBeNull();
    for (const id of [outlives, never, before, otherAccount, expired]) expect(revoked.get(id), `key ${id}`).toBeNull();
    expect(revoked.get(alreadyRevoked)).toBe(revokedAt);
    expect(await db.selectFrom('webhooks').select(['oauth_grant_id', 'oauth_client_id']).where('id', '=', hook).executeTakeFirstOrThrow()).toEqual({ oauth_grant_id: null, oauth_client_id: null });
  });
});
