import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

let t: TestApp;
let staff: Record<string, string>;
let seq = 0;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

async function cheese(stockQuantityKg = 20) {
  return (await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Idempotent cheese ${++seq}`, pricePerKg: 20, stockQuantityKg } })).body as { id: number };
}
const order = (cheeseId: number, kg = 1) => ({ items: [{ cheeseId, quantity_kg: kg }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } });
const customer = async () => bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
const post = (headers: Record<string, string>, key: string, json: unknown) => t.http.post('/v2/orders', { headers: { ...headers, 'idempotency-key': key }, json });
const ordersOf = async (headers: Record<string, string>) => (await t.http.get('/v2/orders', { headers })).body.items as { id: number }[];
const stockOf = async (id: number) => (await t.http.get(`/v2/cheeses/${id}`, { headers: staff })).body.stockQuantityKg;

describe('Idempotency-Key', () => {
  it('the same key and body twice: one order, the first answer replayed with Idempotent-Replayed: true', async () => {
    const c = await cheese();
    const me = await customer();
    const first = await post(me, 'order-0001', order(c.id));
    const second = await post(me, 'order-0001', order(c.id));
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersOf(me)).toHaveLength(1);
    expect(await stockOf(c.id)).toBe(19);
  });

  it('the same key with another body is 422 and creates nothing; another caller\'s key is theirs', async () => {
    const c = await cheese();
    const me = await customer();
    expect((await post(me, 'shared-key', order(c.id))).status).toBe(201);
    const other = await post(me, 'shared-key', order(c.id, 2));
    expect(other.status).toBe(422);
    expect(other.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    const someoneElse = await customer();
    expect((await post(someoneElse, 'shared-key', order(c.id, 2))).status).toBe(201);
    expect(await stockOf(c.id)).toBe(17);
  });

  it('two at once with one key: one order', async () => {
    const c = await cheese();
    const me = await customer();
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(me, 'racing-key', order(c.id))));
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(statuses).toContain(201);
    expect(new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id)).size).toBe(1);
    expect(await ordersOf(me)).toHaveLength(1);
    expect(await stockOf(c.id)).toBe(19);
  });

  it('a 4xx answer is kept and replayed; a 409 is not kept, so a retry after a restock succeeds', async () => {
    const me = await customer();
    const unknown = await post(me, 'bad-cheese', order(999_999));
    const again = await post(me, 'bad-cheese', order(999_999));
    expect([unknown.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([422, 422, 'true']);
    const c = await cheese(1);
    expect((await post(me, 'short-then-fine', order(c.id, 2))).status).toBe(409);
    await t.http.put('/v2/cheeses', { headers: staff, json: { id: c.id, name: `Idempotent cheese ${seq}`, status: 'available', pricePerKg: 20, stockQuantityKg: 5 } });
    expect((await post(me, 'short-then-fine', order(c.id, 2))).status).toBe(201);
  });

  it('refuses a malformed key (400); forgets keys after the TTL (the pruning job)', async () => {
    const c = await cheese();
    const me = await customer();
    expect((await post(me, 'x'.repeat(256), order(c.id))).status).toBe(400);
    expect((await post(me, 'bad key with spaces', order(c.id))).status).toBe(400);
    expect((await post(me, 'yesterday', order(c.id))).status).toBe(201);
    expect(await t.runJob('idempotency-key-pruning', new Date(Date.now() + 25 * 3_600_000))).toBeGreaterThanOrEqual(1);
    const later = await post(me, 'yesterday', order(c.id));
    expect([later.status, later.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(await ordersOf(me)).toHaveLength(2);
  });

  it('a crash between the order\'s commit and its answer: the retry is answered with that order, never a second one', async () => {
    const c = await cheese();
    const me = await customer();
    const db = t.database.db;
    // What an instance that died right after the commit leaves: the order, and the key still running.
    const died = async (key: string, lockedUntil: Date) =>
      db.updateTable('idempotency_keys').set({ state: 'running', status_code: null, response_headers: null, response_body: null, locked_until: lockedUntil.toISOString() }).where('idempotency_key', '=', key).execute();
    for (const [key, lease] of [['crash-in-lease', new Date(Date.now() + 60_000)], ['crash-after-lease', new Date(Date.now() - 1000)]] as const) {
      const first = await post(me, key, order(c.id));
      expect(first.status).toBe(201);
      const row = await db.selectFrom('idempotency_keys').select(['created_resource']).where('idempotency_key', '=', key).executeTakeFirstOrThrow();
      expect(row.created_resource).toBe(`/v2/orders/${first.body.id}`);
      await died(key, lease);
      const retry = await post(me, key, order(c.id));
      expect(retry.status, key).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.headers.get('location')).toBe(`/v2/orders/${first.body.id}`);
      expect(retry.body).toEqual(first.body);
      // ...and that answer is now the recorded one.
      const again = await post(me, key, order(c.id));
      expect([again.status, again.body.id]).toEqual([201, first.body.id]);
    }
    expect(await ordersOf(me)).toHaveLength(2);
    expect(await stockOf(c.id)).toBe(18);
  });

  it('the same holds for a cheese created with a key', async () => {
    const json = { name: `Crash-safe cheese ${++seq}`, pricePerKg: 12, stockQuantityKg: 3 };
    const first = await t.http.post('/v2/cheeses', { headers: { ...staff, 'idempotency-key': 'cheese-crash' }, json });
    expect(first.status).toBe(201);
    await t.database.db.updateTable('idempotency_keys').set({ state: 'running', status_code: null, response_headers: null, response_body: null }).where('idempotency_key', '=', 'cheese-crash').execute();
    const retry = await t.http.post('/v2/cheeses', { headers: { ...staff, 'idempotency-key': 'cheese-crash' }, json });
    expect([retry.status, retry.headers.get('idempotent-replayed'), retry.body.id]).toEqual([201, 'true', first.body.id]);
    expect(await t.database.db.selectFrom('cheeses').select('id').where('name', '=', json.name).execute()).toHaveLength(1);
  });

  it('anonymous sign-ups are keyed by address: a retried sign-up makes one account', async () => {
    const json = { username: 'once.only', email: 'once@example.com', password: 'a long enough secret 4 tests' };
    const first = await t.http.post('/v2/customer', { headers: { 'idempotency-key': 'signup-1' }, json });
    const second = await t.http.post('/v2/customer', { headers: { 'idempotency-key': 'signup-1' }, json });
    expect([first.status, second.status, second.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect((await t.database.db.selectFrom('accounts').select('id').where('username', '=', 'once.only').execute()).length).toBe(1);
  });
});
