import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { apiKey, bearer } from '../helpers/http.js';
import { hashKey } from '../../src/modules/identity/api-key.resolver.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('API keys', () => {
  it('creates a key shown once, stored only as a hash, and listed without the secret', async () => {
    const admin = await t.key(['admin']);
    const created = await t.http.post('/v2/api-keys', { headers: bearer(admin), json: { name: 'storefront', scopes: ['read:cheeses'] } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body.key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(created.body).toMatchObject({ name: 'storefront', scopes: ['read:cheeses'], environment: 'test', expiresAt: null });
    expect(created.body.updatedAt).toBe(created.body.createdAt);

    const stored = await t.database.db.selectFrom('api_keys').select(['key_hash', 'key_prefix']).where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(stored.key_hash).toBe(hashKey(created.body.key));
    expect(stored.key_hash).not.toContain(created.body.key.slice(8));

    const listed = await t.http.get('/v2/api-keys', { headers: apiKey(created.body.key) });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(2); // the creating key and the new one
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    expect(listed.body.items.find((k: any) => k.id === created.body.id).prefix).toBe(created.body.key.slice(0, 16));
  });

  it('allows at most 3 active keys per account: the 4th is 409 and changes nothing', async () => {
    const owner = await t.key(['admin']); // key 1 of this account
    for (let i = 0; i < 2; i++) {
      expect((await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } })).status).toBe(201);
    }
    const fourth = await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } });
    expect(fourth.status).toBe(409);
    expect(fourth.body).toMatchObject({ code: 409, type: 'conflict' });
    const listed = await t.http.get('/v2/api-keys', { headers: bearer(owner) });
    expect(listed.body.items).toHaveLength(3);

    // Revoking one frees a slot (rotation without downtime).
    const revoked = await t.http.delete(`/v2/api-keys/${listed.body.items[2].id}`, { headers: bearer(owner) });
    expect(revoked.status).toBe(204);
    expect((await t.http.post('/v2/api-keys', { headers: bearer(owner), json: { scopes: ['read:cheeses'] } })).status).toBe(201);
  });

  it('never grants more than the creating credential or the role holds', async () => {
    const reader = await t.key(['read:cheeses']);
    const escalate = await t.http.post('/v2/api-keys', { headers: bearer(reader), json: { scopes: ['admin'] } });
    expect(escalate.status).toBe(403);
    const customer = await t.key(['read:cheeses', 'write:orders'], 'customer');
    const write = await t.http.post('/v2/api-keys', { headers: bearer(customer), json: { scopes: ['write:cheeses'] } });
    expect(write.status).toBe(403);
    expect(await t.database.db.selectFrom('api_keys').select('id').where('scopes', '=', 'write:cheeses').execute()).toHaveLength(0);
  });

  it('refuses revoked and expired keys with 401', async () => {
    const admin = await t.key(['admin']);
    // A key expiring in an hour, on a clock the test moves past it (its app's own).
    const clock = new ManualClock();
    const timed = await createTestApp({ config: { clock } });
    const soon = new Date(clock.now() + 3_600_000).toISOString();
    const expiring = await timed.http.post('/v2/api-keys', { headers: bearer(await timed.key(['admin'])), json: { scopes: ['read:cheeses'], expiresAt: soon } });
    expect(expiring.status).toBe(201);
    expect((await timed.http.get('/v2/cheeses', { headers: apiKey(expiring.body.key) })).status).toBe(200);
    clock.advance(3_600_001);
    const expired = await timed.http.get('/v2/cheeses', { headers: apiKey(expiring.body.key) });
    await timed.close();
    expect(expired.status).toBe(401);
    expect(expired.body.message).toMatch(/expired/);

    const other = await t.http.post('/v2/api-keys', { headers: bearer(admin), json: { scopes: ['read:cheeses'] } });
    expect((await t.http.delete(`/v2/api-keys/${other.body.id}`, { headers: bearer(admin) })).status).toBe(204);
    expect((await t.http.get('/v2/cheeses', { headers: apiKey(other.body.key) })).status).toBe(401);
    // Idempotent: revoking again is still 204; someone else's key is 404.
    expect((await t.http.delete(`/v2/api-keys/${other.body.id}`, { headers: bearer(admin) })).status).toBe(204);
    const stranger = await t.key(['admin']);
    expect((await t.http.delete(`/v2/api-keys/${other.body.id}`, { headers: bearer(stranger) })).status).toBe(404);
  });

  it('rejects an expiry in the past with 422', async () => {
    const admin = await t.key(['admin']);
    const res = await t.http.post('/v2/api-keys', { headers: bearer(admin), json: { scopes: ['read:cheeses'], expiresAt: '2001-01-01T00:00:00Z' } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].field).toBe('expiresAt');
  });
});

describe('401 versus 403', () => {
  it('401 without credentials, with a malformed header, or an unknown key', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'sk_test_abc' }, { authorization: 'Basic abc' }, apiKey('sk_test_' + 'x'.repeat(43)), apiKey('nonsense')]) {
      const res = await t.http.get('/v2/cheeses', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 401, type: 'unauthorized' });
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
    }
  });

  it('403 for a valid key lacking the scope; a customer can never write the catalogue', async () => {
    const reader = await t.key(['read:cheeses']);
    const res = await t.http.post('/v2/cheeses', { headers: bearer(reader), json: { name: 'Nope' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 403, type: 'forbidden' });
    const customer = await t.key(['read:cheeses', 'read:orders', 'write:orders', 'read:profile', 'write:profile'], 'customer');
    expect((await t.http.post('/v2/cheeses', { headers: bearer(customer), json: { name: 'Nope' } })).status).toBe(403);
  });

  it('401 for a bearer-only operation given X-API-Key, with a message naming what to send', async () => {
    const admin = await t.key(['admin']);
    const res = await t.http.post('/v2/cheeses', { headers: apiKey(admin), json: { name: 'Wrong transport' } });
    expect(res.status).toBe(401);
    expect(res.body.message).toContain('Authorization');
  });

  it('a live key is 401 outside production', async () => {
    const res = await t.http.get('/v2/cheeses', { headers: apiKey('sk_live_' + 'a'.repeat(43)) });
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/Live keys/);
  });
});

describe('production environment', () => {
  it('issues sk_live_ keys and refuses test keys with 401', async () => {
    const prod = await createTestApp({ env: 'production' });
    try {
      const live = await prod.key(['admin']);
      expect(live).toMatch(/^sk_live_/);
      expect((await prod.http.get('/v2/cheeses', { headers: apiKey(live) })).status).toBe(200);
      const testKey = await t.key(['admin']);
      const refused = await prod.http.get('/v2/cheeses', { headers: apiKey(testKey) });
      expect(refused.status).toBe(401);
      expect(refused.body.message).toMatch(/Test keys/);
    } finally {
      await prod.close();
    }
  });
});

describe('api_key.expiring (decisions.md §6)', () => {
  it('fires once per key, 7 days before it expires, never for revoked or distant keys', async () => {
    const admin = await t.key(['admin']);
    const day = 24 * 60 * 60 * 1000;
    const soon = await t.http.post('/v2/api-keys', { headers: bearer(admin), json: { name: 'soon', scopes: ['read:cheeses'], expiresAt: new Date(Date.now() + 3 * day).toISOString() } });
    const later = await t.http.post('/v2/api-keys', { headers: bearer(admin), json: { name: 'later', scopes: ['read:cheeses'], expiresAt: new Date(Date.now() + 10 * day).toISOString() } });
    expect([soon.status, later.status]).toEqual([201, 201]);

    const events = async () =>
      (await t.database.db.selectFrom('outbox').select(['type', 'data']).where('type', '=', 'api_key.expiring').execute()).map((e) => JSON.parse(e.data));
    expect(await t.runJob('api_key.expiring')).toBe(1);
    expect(await t.runJob('api_key.expiring')).toBe(0);
    expect(await events()).toEqual([{ api_key_id: String(soon.body.id), account_id: expect.any(String), prefix: soon.body.prefix, name: 'soon', expires_at: soon.body.expiresAt }]);

    // Four days on, the second key enters its last week, unless it has been revoked.
    expect((await t.http.delete(`/v2/api-keys/${later.body.id}`, { headers: bearer(admin) })).status).toBe(204);
    expect(await t.runJob('api_key.expiring', new Date(Date.now() + 4 * day))).toBe(0);
    expect(await events()).toHaveLength(1);
  });
});

describe('both X-API-Key and Authorization (clients generated from OpenAPI send every credential)', () => {
  it('both must be valid; the Authorization credential acts; the same key twice is that key', async () => {
    const user = await t.key(['admin']);
    const application = await t.key(['read:cheeses']);
    const userKeys = (await t.http.get('/v2/api-keys', { headers: bearer(user) })).body.items.map((k: any) => k.id);

    const both = await t.http.get('/v2/api-keys', { headers: { ...bearer(user), ...apiKey(application) } });
    expect(both.status).toBe(200);
    expect(both.body.items.map((k: any) => k.id)).toEqual(userKeys);

    // An api_key operation is reached through the X-API-Key even when Authorization carries another kind.
    expect((await t.http.get('/v2/store/inventory', { headers: { ...bearer(user), ...apiKey(application) } })).status).toBe(200);
    expect((await t.http.get('/v2/api-keys', { headers: { ...bearer(user), ...apiKey(user) } })).status).toBe(200);

    const revoked = await t.key(['read:cheeses']);
    const revokedId = (await t.http.get('/v2/api-keys', { headers: bearer(revoked) })).body.items[0].id;
    expect((await t.http.delete(`/v2/api-keys/${revokedId}`, { headers: bearer(revoked) })).status).toBe(204);
    for (const headers of [{ ...bearer(user), ...apiKey(revoked) }, { ...bearer(revoked), ...apiKey(user) }]) {
      const res = await t.http.get('/v2/store/inventory', { headers });
      expect(res.status).toBe(401);
      expect(res.body.type).toBe('unauthorized');
    }
  });
});
