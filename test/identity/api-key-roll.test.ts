import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';
import { hashKey } from '../../src/modules/identity/api-key.resolver.js';
import { NotFoundError } from '../../src/kernel/errors.js';

/**
 * Rolling an API key (issue 19, "API keys": POST /v2/api-keys/{id}/roll): a new key with the
 * old one's name and scopes, shown once; the old one works for the grace period chosen, and no
 * longer counts against the 3 active keys (decisions.md "Issue 19").
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const createKey = (by: string, json: Record<string, unknown>) => t.http.post('/v2/api-keys', { headers: bearer(by), json });
const roll = (by: string, id: number, json: unknown = {}, headers: Record<string, string> = {}) =>
  t.http.post(`/v2/api-keys/${id}/roll`, { headers: { ...bearer(by), ...headers }, json });
/** The key works: an API-key operation any scope of the tests' keys reaches. */
const works = async (key: string) => (await t.http.get('/v2/api-keys', { headers: apiKey(key) })).status;
const idOf = async (key: string) => (await t.database.db.selectFrom('api_keys').select('id').where('key_hash', '=', hashKey(key)).executeTakeFirstOrThrow()).id;
const row = (id: number) =>
  t.database.db.selectFrom('api_keys').select(['id', 'account_id', 'name', 'scopes', 'key_hash', 'key_last4', 'expires_at', 'revoked_at', 'rolled_at', 'created_at']).where('id', '=', id).executeTakeFirstOrThrow();
const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());
const countOf = async (accountId: number) => (await t.database.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).execute()).length;
/** An admin account's first key and a second key of it made with `json`. */
async function accountWith(json: Record<string, unknown>) {
  const owner = await t.key(['admin']);
  const made = await createKey(owner, json);
  expect(made.status).toBe(201);
  return { owner, ownerId: await idOf(owner), key: made.body.key as string, id: made.body.id as number, made: made.body };
}

describe('POST /v2/api-keys/{id}/roll', () => {
  it('answers 201 with a new key of the old name and scopes, shown once, and "replaces"; with 1 hour of grace both keys work', async () => {
    const { owner, key: oldKey, id: oldId, made } = await accountWith({ name: 'till', scopes: ['read:cheeses', 'read:orders'], expiresAt: new Date(Date.now() + 30 * DAY_MS).toISOString() });
    const before = Date.now();
    const res = await roll(owner, oldId, { oldKeyExpiresInSeconds: 3600 });
    const after = Date.now();
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ name: 'till', scopes: ['read:cheeses', 'read:orders'], environment: 'test', replaces: { id: oldId } });
    expect(res.body.key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(res.body.key).not.toBe(oldKey);
    expect(res.body.id).not.toBe(oldId);
    expect(res.body.prefix).toBe(res.body.key.slice(0, 16));
    expect(res.body.last4).toBe(res.body.key.slice(-4));
    // The old key: min(its expiry in 30 days, now + 1 hour).
    const replacesAt = Date.parse(res.body.replaces.expiresAt);
    expect(replacesAt).toBeGreaterThanOrEqual(before + HOUR_MS - 1000);
    expect(replacesAt).toBeLessThanOrEqual(after + HOUR_MS);
    // The new key lives as long as the old one was made to (30 days), from now.
    const lifetime = Date.parse(made.expiresAt) - Date.parse(made.createdAt);
    expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBe(lifetime);

    expect(await works(oldKey)).toBe(200);
    expect(await works(res.body.key)).toBe(200);

    const old = await row(oldId);
    expect(iso(old.rolled_at)).not.toBeNull();
    expect(iso(old.expires_at)).toBe(res.body.replaces.expiresAt);
    expect(old.revoked_at).toBeNull();
    const created = await row(res.body.id);
    expect(created).toMatchObject({ account_id: old.account_id, name: 'till', scopes: old.scopes, key_hash: hashKey(res.body.key), key_last4: res.body.key.slice(-4), rolled_at: null, revoked_at: null });
    expect(iso(created.rolled_at)).toBeNull();
    expect(JSON.stringify(created)).not.toContain(res.body.key);

    // GET /api-keys still lists the rolled key while it works, with its last 4.
    const listed = (await t.http.get('/v2/api-keys', { headers: bearer(owner) })).body.items as any[];
    expect(listed.map((k) => k.id)).toEqual(expect.arrayContaining([oldId, res.body.id]));
    expect(listed.find((k) => k.id === oldId)).toMatchObject({ last4: oldKey.slice(-4), expiresAt: res.body.replaces.expiresAt });
    expect(JSON.stringify(listed)).not.toContain(res.body.key);
  });

  it('with 0 seconds of grace the old key is refused at once (401), even just after it was used', async () => {
    const { owner, key: oldKey, id: oldId } = await accountWith({ name: 'pos', scopes: ['read:cheeses'] });
    expect(await works(oldKey)).toBe(200); // resolved, and cached by this instance
    const res = await roll(owner, oldId, { oldKeyExpiresInSeconds: 0 });
    expect(res.status).toBe(201);
    const refused = await t.http.get('/v2/api-keys', { headers: apiKey(oldKey) });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/expired/);
    expect(await works(res.body.key)).toBe(200);
    expect(Date.parse(res.body.replaces.expiresAt)).toBeLessThanOrEqual(Date.now());
    // No expiry before, none now: the new key never expires either.
    expect(res.body.expiresAt).toBeNull();
    expect((await row(res.body.id)).expires_at).toBeNull();
    // The expired old key is no longer listed as working.
    const listed = (await t.http.get('/v2/api-keys', { headers: bearer(owner) })).body.items.map((k: any) => k.id);
    expect(listed).not.toContain(oldId);
    expect(listed).toContain(res.body.id);
  });

  it('24 hours by default, 7 days on request, never later than the old key would have expired', async () => {
    const { owner } = await accountWith({ scopes: ['read:cheeses'] });
    const cases: [Record<string, unknown>, number | null, number][] = [
      [{}, null, DAY_MS],
      [{ oldKeyExpiresInSeconds: 86400 }, null, DAY_MS],
      [{ oldKeyExpiresInSeconds: 604800 }, null, 7 * DAY_MS],
      // Expiring in 2 hours: 7 days of grace leave it at 2 hours.
      [{ oldKeyExpiresInSeconds: 604800 }, 2 * HOUR_MS, 2 * HOUR_MS],
    ];
    for (const [body, lifetime, grace] of cases) {
      const made = await createKey(owner, { scopes: ['read:cheeses'], ...(lifetime ? { expiresAt: new Date(Date.now() + lifetime).toISOString() } : {}) });
      expect(made.status).toBe(201);
      const before = Date.now();
      const res = await roll(owner, made.body.id, body);
      expect(res.status, JSON.stringify(body)).toBe(201);
      const expected = lifetime ? Date.parse(made.body.expiresAt) : before + grace;
      expect(Math.abs(Date.parse(res.body.replaces.expiresAt) - expected), JSON.stringify(body)).toBeLessThan(2000);
      if (lifetime) expect(res.body.replaces.expiresAt).toBe(made.body.expiresAt);
      expect(await works(made.body.key)).toBe(200);
      // Back under both caps for the next case: the active keys, and the keys that authenticate (retiring ones count, issue 28).
      expect((await t.http.delete(`/v2/api-keys/${res.body.id}`, { headers: bearer(owner) })).status).toBe(204);
      expect((await t.http.delete(`/v2/api-keys/${made.body.id}`, { headers: bearer(owner) })).status).toBe(204);
    }
  });

  it('refuses a grace period other than now, 1 hour, 24 hours or 7 days, and unknown fields (422), changing nothing', async () => {
    const { owner, id } = await accountWith({ scopes: ['read:cheeses'] });
    const accountId = (await row(id)).account_id;
    for (const body of [{ oldKeyExpiresInSeconds: 60 }, { oldKeyExpiresInSeconds: '3600' }, { oldKeyExpiresInSeconds: 3600, name: 'other' }]) {
      const res = await roll(owner, id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.type).toBe('validation_failed');
    }
    expect((await row(id)).rolled_at).toBeNull();
    expect(await countOf(accountId)).toBe(2);
  });

  it('at 3 active keys a roll succeeds; a 4th fresh key is still 409 while 3 unrolled keys are active; the rolled key does not count', async () => {
    const owner = await t.key(['admin']); // key 1
    const second = await createKey(owner, { name: 'second', scopes: ['read:cheeses'] });
    const third = await createKey(owner, { name: 'third', scopes: ['read:cheeses'] });
    expect([second.status, third.status]).toEqual([201, 201]);
    const full = await createKey(owner, { scopes: ['read:cheeses'] });
    expect(full.status).toBe(409);

    const rolled = await roll(owner, third.body.id, { oldKeyExpiresInSeconds: 3600 });
    expect(rolled.status).toBe(201);
    // Four keys work now (the rolled one for an hour), but three count.
    expect((await t.http.get('/v2/api-keys', { headers: bearer(owner) })).body.items).toHaveLength(4);
    const fourth = await createKey(owner, { scopes: ['read:cheeses'] });
    expect(fourth.status).toBe(409);
    expect(fourth.body.message).toBe(full.body.message);
    expect(fourth.body.message).toMatch(/at most 3 active keys/);

    // Revoking the new key leaves 2 unrolled active keys and the rolled one: there is room for one.
    expect((await t.http.delete(`/v2/api-keys/${rolled.body.id}`, { headers: bearer(owner) })).status).toBe(204);
    expect(await works(third.body.key)).toBe(200);
    expect((await createKey(owner, { scopes: ['read:cheeses'] })).status).toBe(201);
    expect((await createKey(owner, { scopes: ['read:cheeses'] })).status).toBe(409);
  });

  it('a key already rolled, revoked or expired is 409, and nothing changes', async () => {
    const { owner, id } = await accountWith({ scopes: ['read:cheeses'] });
    const accountId = (await row(id)).account_id;
    const first = await roll(owner, id, { oldKeyExpiresInSeconds: 3600 });
    expect(first.status).toBe(201);
    const again = await roll(owner, id, { oldKeyExpiresInSeconds: 3600 });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 409, type: 'conflict', message: expect.stringMatching(/already rolled/) });
    expect(again.text).not.toMatch(/sk_test_/);

    const revoked = await createKey(owner, { scopes: ['read:cheeses'] });
    expect((await t.http.delete(`/v2/api-keys/${revoked.body.id}`, { headers: bearer(owner) })).status).toBe(204);
    const ofRevoked = await roll(owner, revoked.body.id);
    expect(ofRevoked.status).toBe(409);
    expect(ofRevoked.body.message).toMatch(/revoked/);

    const expiring = await createKey(owner, { scopes: ['read:cheeses'] });
    await t.database.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', expiring.body.id).execute();
    const ofExpired = await roll(owner, expiring.body.id);
    expect(ofExpired.status).toBe(409);
    expect(ofExpired.body.message).toMatch(/expired/);

    // owner, the rolled key, its replacement, the revoked and the expired one: no key was added.
    expect(await countOf(accountId)).toBe(5);
    for (const keyId of [revoked.body.id, expiring.body.id]) expect((await row(keyId)).rolled_at).toBeNull();
    expect(iso((await row(id)).expires_at)).toBe(first.body.replaces.expiresAt);
  });

  it('another account\'s key is 404 and stays as it was', async () => {
    const { id, key } = await accountWith({ scopes: ['read:cheeses'] });
    const stranger = await t.key(['admin']);
    const res = await roll(stranger, id);
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('not_found');
    expect(await roll(stranger, 999_999_999).then((r) => r.status)).toBe(404);
    expect((await row(id)).rolled_at).toBeNull();
    expect((await row(id)).expires_at).toBeNull();
    expect(await works(key)).toBe(200);
  });

  it('a read-only key rolls no key (403); a key rolls only keys whose scopes it holds; a writing key may roll itself', async () => {
    const { owner, ownerId, key: reader, id: readerId } = await accountWith({ scopes: ['read:cheeses', 'read:orders'] });
    const refused = await roll(reader, ownerId);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ type: 'forbidden', message: expect.stringContaining('read-only') });
    // Not even itself: rolling makes a key, which a read-only credential never does.
    expect((await roll(reader, readerId)).status).toBe(403);

    const writer = await createKey(owner, { scopes: ['read:cheeses', 'write:cheeses'] });
    const weaker = await roll(writer.body.key, ownerId);
    expect(weaker.status).toBe(403); // the admin key holds more than it: it may not revoke it
    expect(weaker.body.message).toMatch(/cannot revoke/);
    for (const keyId of [ownerId, readerId]) expect((await row(keyId)).rolled_at).toBeNull();
    expect(await works(owner)).toBe(200);

    const itself = await roll(writer.body.key, writer.body.id, { oldKeyExpiresInSeconds: 3600 });
    expect(itself.status).toBe(201);
    expect(itself.body.scopes).toEqual(['read:cheeses', 'write:cheeses']);
    expect(await works(itself.body.key)).toBe(200);
  });

  it('a credential with an expiry cannot roll a key into one that outlives it (403)', async () => {
    const parentExpiry = new Date(Date.now() + 10 * DAY_MS).toISOString();
    const { owner, ownerId, key: parent } = await accountWith({ scopes: ['admin'], expiresAt: parentExpiry });
    // The owner's key never expires, so its replacement would not either.
    const refused = await roll(parent, ownerId);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/outlive/);
    expect((await row(ownerId)).rolled_at).toBeNull();
    // A key made by it (expiring with it, in 10 days) it may roll: the new one expires 10 days on from its creation.
    const child = await createKey(parent, { scopes: ['read:cheeses'], expiresAt: new Date(Date.now() + DAY_MS).toISOString() });
    expect(child.status).toBe(201);
    expect((await roll(parent, child.body.id)).status).toBe(201);
    expect(await works(owner)).toBe(200);
  });

  it('is never replayed for a repeated Idempotency-Key: the secret is shown once, and not stored', async () => {
    const { owner, id } = await accountWith({ scopes: ['read:cheeses'] });
    const headers = { 'idempotency-key': `roll-${id}` };
    const first = await roll(owner, id, { oldKeyExpiresInSeconds: 3600 }, headers);
    expect(first.status).toBe(201);
    expect(first.body.key).toMatch(/^sk_test_/);
    const retry = await roll(owner, id, { oldKeyExpiresInSeconds: 3600 }, headers);
    expect(retry.status).toBe(409);
    expect(retry.text).not.toMatch(/sk_test_/);
    expect(retry.body.message).toMatch(/shown once/);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const stored = await t.database.db.selectFrom('idempotency_keys').select(['response_body', 'response_headers']).execute();
    expect(JSON.stringify(stored)).not.toMatch(/sk_(test|live)_/);
    // One roll, one new key.
    const keys = await t.database.db.selectFrom('api_keys').select('id').where('account_id', '=', (await row(id)).account_id).execute();
    expect(keys).toHaveLength(3);
  });
});

describe('last 4 characters', () => {
  it('are stored for new keys and listed; keys made before have none (null)', async () => {
    const { owner, key, id } = await accountWith({ scopes: ['read:cheeses'] });
    expect((await row(id)).key_last4).toBe(key.slice(-4));
    expect((await row(await idOf(owner))).key_last4).toBe(owner.slice(-4));
    await t.database.db.updateTable('api_keys').set({ key_last4: null }).where('id', '=', id).execute();
    const listed = (await t.http.get('/v2/api-keys', { headers: bearer(owner) })).body.items as any[];
    expect(listed.find((k) => k.id === id).last4).toBeNull();
    expect(listed.find((k) => k.id !== id).last4).toBe(owner.slice(-4));
  });
});

describe('ApiKeyService.listAll and get (the dashboard\'s)', () => {
  it('listAll: every key of the account, newest first, with its state; get: 404 for another account\'s key', async () => {
    const service = t.app.modules.identity.provides.apiKeys;
    const { owner, ownerId, id } = await accountWith({ name: 'rolled', scopes: ['read:cheeses'] });
    const accountId = (await row(id)).account_id;
    const rolled = await roll(owner, id, { oldKeyExpiresInSeconds: 3600 });
    const revoked = await createKey(owner, { name: 'revoked', scopes: ['read:cheeses'] });
    await t.http.delete(`/v2/api-keys/${revoked.body.id}`, { headers: bearer(owner) });
    const expired = await createKey(owner, { name: 'expired', scopes: ['read:cheeses'] });
    await t.database.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', expired.body.id).execute();

    const all = await service.listAll(accountId);
    expect(all.map((k) => k.id)).toEqual([expired.body.id, revoked.body.id, rolled.body.id, id, ownerId]);
    const byId = new Map(all.map((k) => [k.id, k]));
    expect(byId.get(id)).toMatchObject({ rolledAt: expect.any(String), revokedAt: null, keyLast4: expect.any(String) });
    expect(byId.get(revoked.body.id)).toMatchObject({ revokedAt: expect.any(String), rolledAt: null });
    expect(byId.get(rolled.body.id)).toMatchObject({ name: 'rolled', rolledAt: null, revokedAt: null, keyLast4: rolled.body.key.slice(-4) });
    // Never the hash nor the key itself.
    expect(JSON.stringify(all)).not.toMatch(/hash/i);
    expect(JSON.stringify(all)).not.toContain(rolled.body.key);
    expect(JSON.stringify(all)).not.toContain(hashKey(rolled.body.key));

    expect(await service.get(accountId, id)).toEqual(byId.get(id));
    const stranger = await t.key(['admin']);
    const strangerAccount = (await row(await idOf(stranger))).account_id;
    await expect(service.get(strangerAccount, id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.get(accountId, 999_999_999)).rejects.toBeInstanceOf(NotFoundError);
    // The cap leaves out the rolled key: list (GET /api-keys) still shows it.
    expect((await service.list(accountId)).map((k) => k.id).sort()).toEqual([ownerId, id, rolled.body.id].sort());
  });

  it('listAll shows at most 100 keys', async () => {
    const { id } = await accountWith({ scopes: ['read:cheeses'] });
    const accountId = (await row(id)).account_id;
    const now = new Date().toISOString();
    const rows = Array.from({ length: 105 }, (_, i) => ({ account_id: accountId, key_prefix: 'sk_test_revoked_', key_hash: `bulk-${accountId}-${i}`, environment: 'test' as const, scopes: 'read:cheeses', revoked_at: now, created_at: now, updated_at: now }));
    await t.database.db.insertInto('api_keys').values(rows).execute();
    const all = await t.app.modules.identity.provides.apiKeys.listAll(accountId);
    expect(all).toHaveLength(100);
    expect(all[0]!.id).toBeGreaterThan(all[99]!.id);
  });
});
