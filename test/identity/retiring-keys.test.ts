import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';
import { MAX_AUTHENTICATING_KEYS } from '../../src/modules/identity/api-key.rules.js';

/**
 * Issue 28 §3 and §4: a retiring key (rolled, in its grace period) manages nothing but itself,
 * and at most MAX_AUTHENTICATING_KEYS keys of an account authenticate at once (rolled keys in
 * grace included): a roll or creation past it is 409, nothing changed, saying how to proceed.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const roll = (by: string, id: number, json: unknown = { oldKeyExpiresInSeconds: 604800 }) => t.http.post(`/v2/api-keys/${id}/roll`, { headers: bearer(by), json });
const rows = (accountId: number) => t.database.db.selectFrom('api_keys').select(['id', 'revoked_at', 'rolled_at', 'expires_at']).where('account_id', '=', accountId).orderBy('id').execute();
const accountOf = async (key: string) => (await t.http.get('/v2/api-keys', { headers: apiKey(key) })).body.items[0].id as number;
const authenticating = (list: { revoked_at: unknown; expires_at: unknown }[]) => list.filter((r) => r.revoked_at === null && (r.expires_at === null || new Date(r.expires_at as string).getTime() > Date.now())).length;

async function rolledPair() {
  const owner = await t.key(['read:cheeses', 'write:cheeses', 'read:orders']);
  const made = await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { name: 'till', scopes: ['read:cheeses', 'write:cheeses', 'read:orders'] } });
  expect(made.status).toBe(201);
  // The key is used (and cached as active) before it is rolled.
  expect((await t.http.get('/v2/api-keys', { headers: apiKey(made.body.key) })).status).toBe(200);
  const rolled = await roll(made.body.key, made.body.id);
  expect(rolled.status, rolled.text).toBe(201);
  return { owner, old: { id: made.body.id as number, key: made.body.key as string }, successor: { id: rolled.body.id as number, key: rolled.body.key as string } };
}

describe('a retiring key manages nothing but itself', () => {
  it('cannot revoke, roll or outdo its successor, create a key or a webhook (403 naming the rule); nothing changes', async () => {
    const { owner, old, successor } = await rolledPair();
    const ownerId = (await t.database.db.selectFrom('api_keys').select('account_id').where('id', '=', old.id).executeTakeFirstOrThrow()).account_id;
    const before = await rows(ownerId);
    const webhooksBefore = (await t.database.db.selectFrom('webhooks').select('id').where('account_id', '=', ownerId).execute()).length;
    const attempts = [
      t.http.delete(`/v2/api-keys/${successor.id}`, { headers: bearer(old.key) }),
      roll(old.key, successor.id),
      t.http.post('/v2/api-keys', { headers: bearer(old.key), json: { scopes: ['read:cheeses'] } }),
      t.http.post('/v2/webhooks', { headers: bearer(old.key), json: { url: 'http://127.0.0.1:9/retiring', events: ['cheese.*'] } }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status, res.text).toBe(403);
      expect(res.body.message).toContain('a retiring key manages nothing but itself');
    }
    const owners = await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } });
    const ownerKeyId = owners.body.id as number;
    expect((await t.http.delete(`/v2/api-keys/${ownerKeyId}`, { headers: bearer(old.key) })).status).toBe(403);
    expect((await rows(ownerId)).filter((r) => r.id !== ownerKeyId)).toEqual(before);
    expect((await t.database.db.selectFrom('webhooks').select('id').where('account_id', '=', ownerId).execute()).length).toBe(webhooksBefore);
    // It still reads, the successor works and manages keys, and the retiring key may revoke itself.
    expect((await t.http.get('/v2/api-keys', { headers: apiKey(old.key) })).status).toBe(200);
    expect((await t.http.delete(`/v2/api-keys/${old.id}`, { headers: bearer(old.key) })).status).toBe(204);
    expect((await t.http.get('/v2/api-keys', { headers: apiKey(old.key) })).status).toBe(401);
    expect((await t.http.get('/v2/api-keys', { headers: apiKey(successor.key) })).status).toBe(200);
  });

  it('changes, rotates the secret of or deletes none of the account\'s webhooks (probe 28): nothing changes', async () => {
    const { old, successor } = await rolledPair();
    const made = await t.http.post('/v2/webhooks', { headers: bearer(successor.key), json: { url: 'http://127.0.0.1:9/account-hook', events: ['cheese.*'] } });
    expect(made.status, made.text).toBe(201);
    const attempts = [
      t.http.patch(`/v2/webhooks/${made.body.id}`, { headers: bearer(old.key), json: { url: 'http://127.0.0.1:9/elsewhere' } }),
      t.http.post(`/v2/webhooks/${made.body.id}/rotate-secret`, { headers: bearer(old.key), json: {} }),
      t.http.delete(`/v2/webhooks/${made.body.id}`, { headers: bearer(old.key) }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status, res.text).toBe(403);
      expect(res.body.message).toContain('a retiring key manages nothing but itself');
    }
    const after = await t.http.get(`/v2/webhooks/${made.body.id}`, { headers: bearer(successor.key) });
    expect(after.body).toMatchObject({ url: 'http://127.0.0.1:9/account-hook', previousSecretExpiresAt: null });
    // It still reads it; the successor changes it.
    expect((await t.http.get(`/v2/webhooks/${made.body.id}`, { headers: bearer(old.key) })).status).toBe(200);
    expect((await t.http.patch(`/v2/webhooks/${made.body.id}`, { headers: bearer(successor.key), json: { description: 'new key' } })).status).toBe(200);
  });

  it('registers no OAuth client (staff\'s retiring key)', async () => {
    const staff = await t.key(['admin']);
    const made = await t.http.post('/v2/api-keys', { headers: bearer(staff), json: { scopes: ['admin'] } });
    expect((await roll(made.body.key, made.body.id)).status).toBe(201);
    const before = (await t.database.db.selectFrom('oauth_clients').select('id').execute()).length;
    const res = await t.http.post('/v2/oauth-clients', { headers: bearer(made.body.key), json: { name: 'From a retiring key', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] } });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('a retiring key manages nothing but itself');
    expect((await t.database.db.selectFrom('oauth_clients').select('id').execute()).length).toBe(before);
  });
});

describe('at most 6 keys of an account authenticate at once', () => {
  it('rolling one key again and again stops at the cap with a 409 saying how to proceed; a roll with no grace, or after a revocation, goes on', async () => {
    const owner = await t.key(['read:cheeses', 'write:cheeses']);
    const accountId = (await t.database.db.selectFrom('api_keys').select('account_id').where('id', '=', await accountOf(owner)).executeTakeFirstOrThrow()).account_id;
    let current = (await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } })).body as { id: number; key: string };
    // The owner's key and this one authenticate: 4 rolls with 7 days of grace bring the count to 6.
    for (let i = 0; i < MAX_AUTHENTICATING_KEYS - 2; i++) {
      const res = await roll(owner, current.id);
      expect(res.status, res.text).toBe(201);
      current = res.body;
    }
    expect(authenticating(await rows(accountId))).toBe(MAX_AUTHENTICATING_KEYS);
    const before = await rows(accountId);
    const refused = await roll(owner, current.id);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain(`At most ${MAX_AUTHENTICATING_KEYS} keys of an account may authenticate at once`);
    expect(refused.body.message).toContain('"oldKeyExpiresInSeconds": 0');
    expect(await rows(accountId)).toEqual(before);
    // Creating one more is refused too (only 2 are active, the rest retiring).
    const created = await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } });
    expect(created.status).toBe(409);
    expect(created.body.message).toContain('authenticate at once');
    expect(await rows(accountId)).toEqual(before);
    // With no grace the old key stops at once: the count stays at 6.
    const now = await roll(owner, current.id, { oldKeyExpiresInSeconds: 0 });
    expect(now.status, now.text).toBe(201);
    expect(authenticating(await rows(accountId))).toBe(MAX_AUTHENTICATING_KEYS);
    // Revoking a retiring key makes room for a roll with grace.
    const retiring = (await rows(accountId)).find((r) => r.rolled_at !== null && r.revoked_at === null && new Date(r.expires_at as string).getTime() > Date.now())!;
    expect((await t.http.delete(`/v2/api-keys/${retiring.id}`, { headers: bearer(owner) })).status).toBe(204);
    expect((await roll(owner, now.body.id)).status).toBe(201);
    expect(authenticating(await rows(accountId))).toBe(MAX_AUTHENTICATING_KEYS);
  });

  it('concurrent rolls of one account\'s keys never pass the cap', async () => {
    const owner = await t.key(['read:cheeses', 'write:cheeses']);
    const accountId = (await t.database.db.selectFrom('api_keys').select('account_id').where('id', '=', await accountOf(owner)).executeTakeFirstOrThrow()).account_id;
    const a = (await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } })).body;
    const b = (await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } })).body;
    // 3 authenticate; 2 rolls bring 5; then 2 concurrent rolls: only one may pass.
    const a2 = (await roll(owner, a.id)).body;
    const b2 = (await roll(owner, b.id)).body;
    const results = await Promise.all([roll(owner, a2.id), roll(owner, b2.id)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(authenticating(await rows(accountId))).toBe(MAX_AUTHENTICATING_KEYS);
  });

  it('the dashboard\'s roll page answers 409 with the same message, and changes nothing', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    for (let i = 0; i < 2; i++) {
      await browser.get('/dashboard/keys/new');
      expect((await browser.post('/dashboard/keys', { name: `k${i}`, scopes: ['read:cheeses'], expires: 'never' })).status).toBe(303);
    }
    const [first] = await rows(customer.accountId);
    let id = first!.id;
    for (let i = 0; i < MAX_AUTHENTICATING_KEYS - 2; i++) {
      await browser.get(`/dashboard/keys/${id}/roll`);
      expect((await browser.post(`/dashboard/keys/${id}/roll`, { oldKeyExpires: '604800' })).status).toBe(303);
      id = (await rows(customer.accountId)).at(-1)!.id;
    }
    const before = await rows(customer.accountId);
    await browser.get(`/dashboard/keys/${id}/roll`);
    const refused = await browser.post(`/dashboard/keys/${id}/roll`, { oldKeyExpires: '3600' });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain(`At most ${MAX_AUTHENTICATING_KEYS} keys of an account may authenticate at once`);
    expect(await rows(customer.accountId)).toEqual(before);
    expect((await browser.post(`/dashboard/keys/${id}/roll`, { oldKeyExpires: '0' })).status).toBe(303);
  });
});
