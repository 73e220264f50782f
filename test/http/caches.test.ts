import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { JumpingClock } from '../helpers/clock.js';
import { apiKey, bearer } from '../helpers/http.js';

// A minute's TTLs, passed by moving the app's clock: what a write behind the caches' back shows
// before the TTL and after it can be told apart.
const TTL_MS = 60_000;
const clock = new JumpingClock();
let t: TestApp;
let admin: string;
let id: number;
beforeAll(async () => {
  t = await createTestApp({ config: { readCacheTtlMs: TTL_MS, authCacheTtlMs: TTL_MS, clock } });
  admin = await t.key(['admin']);
  id = (await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name: 'Cached Comté', stockQuantityKg: 10 } })).body.id;
});
afterAll(() => t.close());

describe('catalogue read cache', () => {
  it('still authenticates and authorises every request that would hit the cache', async () => {
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(admin) })).status).toBe(200);
    expect((await t.http.get(`/v2/cheeses/${id}`)).status).toBe(401);
    const noScope = await t.key(['write:orders']);
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(noScope) })).status).toBe(403);
  });

  it('serves a write on this instance at once, with a new ETag', async () => {
    const first = await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(admin) });
    const again = await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(admin) });
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('cache-control')).toBe('private, no-cache');
    expect((await t.http.post(`/v2/cheeses/${id}?name=Renamed%20Comt%C3%A9`, { headers: bearer(admin) })).status).toBe(200);
    const after = await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(admin) });
    expect(after.body.name).toBe('Renamed Comté');
    expect(after.headers.get('etag')).not.toBe(first.headers.get('etag'));
    const list = await t.http.get('/v2/cheeses?q=renamed', { headers: apiKey(admin) });
    expect(list.body.items.map((c: any) => c.id)).toEqual([id]);
  });

  it('answers If-None-Match from a cached entry with 304, and keeps JSON and CSV apart', async () => {
    const json = await t.http.get('/v2/cheeses?limit=5', { headers: apiKey(admin) });
    const cached = await t.http.get('/v2/cheeses?limit=5', { headers: { ...apiKey(admin), 'if-none-match': json.headers.get('etag')! } });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
    const csv = await t.http.get('/v2/cheeses?limit=5', { headers: { ...apiKey(admin), accept: 'text/csv' } });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.text.startsWith('id,slug,name')).toBe(true);
    expect((await t.http.get('/v2/cheeses?limit=5', { headers: apiKey(admin) })).headers.get('content-type')).toContain('application/json');
  });

  it('shows another instance\'s write (here: straight to the database) within the TTL', async () => {
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(admin) })).body.rind).toBeNull();
    await t.database.db.updateTable('cheeses').set({ rind: 'washed' }).where('id', '=', id).execute();
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(admin) })).body.rind).toBeNull();
    clock.advance(TTL_MS + 1);
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(admin) })).body.rind).toBe('washed');
  });
});

describe('API key cache', () => {
  it('honours another instance\'s revocation within the TTL, and its own at once', async () => {
    const created = await t.http.post('/v2/api-keys', { headers: bearer(admin), json: { scopes: ['read:cheeses'] } });
    const key = created.body.key;
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(200);
    // Revoked behind this instance's back, as another instance would.
    await t.database.db.updateTable('api_keys').set({ revoked_at: clock.iso() }).where('id', '=', created.body.id).execute();
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(200);
    clock.advance(TTL_MS + 1);
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(401);
  });
});

describe('total carried in the cursor', () => {
  it('keeps the walk\'s total across pages while a new walk counts again', async () => {
    for (const name of ['Walk One', 'Walk Two']) await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name } });
    const first = await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(admin) });
    const total = first.body.total;
    expect(total).toBeGreaterThanOrEqual(3);
    expect(first.body.hasMore).toBe(true);
    await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name: 'Arrives Mid-Walk' } });
    const second = await t.http.get(`/v2/cheeses?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`, { headers: apiKey(admin) });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.total).toBe(total);
    const fresh = await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(admin) });
    expect(fresh.body.total).toBe(total + 1);
  });
});
