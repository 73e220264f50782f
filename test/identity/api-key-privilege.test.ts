import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';

/** A credential never makes or removes a stronger one (decisions.md, "Privilege"). */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const day = 24 * 60 * 60 * 1000;
const createKey = (by: string, json: Record<string, unknown>) => t.http.post('/v2/api-keys', { headers: bearer(by), json });
const revokeKey = (by: string, id: number) => t.http.delete(`/v2/api-keys/${id}`, { headers: bearer(by) });
const activeIds = async (by: string) => ((await t.http.get('/v2/api-keys', { headers: bearer(by) })).body.items as { id: number }[]).map((k) => k.id);

/** An admin account's first key plus a second key of the same account with `scopes`. */
async function accountWith(json: Record<string, unknown>) {
  const full = await t.key(['admin']);
  const made = await createKey(full, json);
  expect(made.status).toBe(201);
  return { full, fullId: (await activeIds(full)).find((id) => id !== made.body.id)!, other: made.body.key as string, otherId: made.body.id as number };
}

describe('privilege of API keys', () => {
  it('a read-only key cannot revoke the account\'s full key (403, the key keeps working), but may revoke itself', async () => {
    const { full, fullId, other: reader, otherId: readerId } = await accountWith({ scopes: ['read:cheeses'] });
    const refused = await revokeKey(reader, fullId);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 403, type: 'forbidden', message: expect.stringContaining('read-only') });
    expect((await t.http.get('/v2/store/inventory', { headers: apiKey(full) })).status).toBe(200);
    expect(await activeIds(full)).toContain(fullId);

    expect((await revokeKey(reader, readerId)).status).toBe(204);
    expect((await t.http.get('/v2/store/inventory', { headers: apiKey(reader) })).status).toBe(401);
  });

  it('a read-only key creates no key, not even a read-only one', async () => {
    const { full, other: reader } = await accountWith({ scopes: ['read:cheeses', 'read:orders'] });
    const before = await activeIds(full);
    const refused = await createKey(reader, { scopes: ['read:cheeses'] });
    expect(refused.status).toBe(403);
    expect(await activeIds(full)).toEqual(before);
  });

  it('a key revokes only keys whose scopes it holds', async () => {
    const { full, fullId, other: writer, otherId: writerId } = await accountWith({ scopes: ['read:cheeses', 'write:cheeses'] });
    expect((await revokeKey(writer, fullId)).status).toBe(403); // the admin key holds more
    expect(await activeIds(full)).toContain(fullId);
    expect((await revokeKey(full, writerId)).status).toBe(204); // admin covers every scope
  });

  it('a key with an expiry makes keys that expire no later: omitted means its own expiry, later is 403', async () => {
    const parentExpiry = new Date(Date.now() + 10 * day).toISOString();
    const { full, other: parent } = await accountWith({ scopes: ['read:cheeses', 'write:cheeses'], expiresAt: parentExpiry });
    const before = await activeIds(full);

    const forever = await createKey(parent, { scopes: ['read:cheeses'] });
    expect(forever.status).toBe(201);
    expect(forever.body.expiresAt).toBe(parentExpiry);

    const later = await createKey(parent, { scopes: ['read:cheeses'], expiresAt: new Date(Date.now() + 20 * day).toISOString() });
    expect(later.status).toBe(403);
    expect(later.body.message).toContain(parentExpiry);

    expect((await revokeKey(parent, forever.body.id)).status).toBe(204); // frees the account's third slot
    const sooner = new Date(Date.now() + 2 * day).toISOString();
    const ok = await createKey(parent, { scopes: ['read:cheeses'], expiresAt: sooner });
    expect(ok.status).toBe(201);
    expect(ok.body.expiresAt).toBe(sooner);
    expect(await activeIds(full)).toHaveLength(before.length + 1);
  });

  it('credentials travel in headers only: a key in the query string does not authenticate', async () => {
    const key = await t.key(['admin']);
    for (const name of ['api_key', 'apiKey', 'key', 'access_token']) {
      const res = await t.http.get(`/v2/store/inventory?${name}=${key}`);
      expect(res.status, name).toBe(401);
    }
  });
});
