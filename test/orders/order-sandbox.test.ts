import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CUSTOMER } from '../../src/bootstrap.js';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ seed: true }));
}, 60_000);
afterAll(() => t.close());

const login = async (app: TestApp, username: string, password: string) => (await app.http.post('/v2/customer/login', { json: { username, password } }));

describe('the sandbox\'s orders 1 to 10', () => {
  it('belong to the documented test customer, in a spread of states, and stay there', async () => {
    const token = (await login(t, TEST_CUSTOMER.username, TEST_CUSTOMER.password)).body.token as string;
    const key = (await t.http.post('/v2/api-keys', { headers: bearer(token), json: { scopes: ['read:orders', 'write:orders'] } })).body.key as string;
    const statuses: string[] = [];
    for (let id = 1; id <= 10; id++) {
      const res = await t.http.get(`/v2/store/order/${id}`, { headers: { 'x-api-key': key } });
      expect(res.status).toBe(200);
      expect(res.body.customer).toBe(TEST_CUSTOMER.username);
      statuses.push(res.body.status);
    }
    expect(statuses).toEqual(['placed', 'placed', 'approved', 'approved', 'shipped', 'shipped', 'delivered', 'delivered', 'cancelled', 'cancelled']);
    expect(await t.runJob('order-lifecycle', new Date(Date.now() + 86_400_000))).toBe(0);
    const stranger = bearer(await t.key(['read:orders'], 'customer'));
    expect((await t.http.get('/v2/orders/1', { headers: stranger })).status).toBe(404);
  });

  it('do not exist in production, nor does the test customer', async () => {
    const production = await createTestApp({ env: 'production', seed: true });
    try {
      expect((await login(production, TEST_CUSTOMER.username, TEST_CUSTOMER.password)).status).toBe(401);
      expect((await production.http.get('/v2/orders', { headers: bearer(await production.key(['admin'])) })).body.items).toEqual([]);
    } finally {
      await production.close();
    }
  }, 60_000);
});

describe('closing an account', () => {
  it('cancels its orders that have not shipped and keeps every order for the books, anonymised', async () => {
    const username = 'leaving.customer';
    const password = 'a long enough secret 4 tests';
    expect((await t.http.post('/v2/customer', { json: { username, email: 'leaving@example.com', password } })).status).toBe(201);
    const token = (await login(t, username, password)).body.token as string;
    const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Farewell Fourme', pricePerKg: 18, stockQuantityKg: 10 } })).body;
    const place = async () => (await t.http.post('/v2/orders', { headers: bearer(token), json: { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '9 Private Road', city: 'Montbrison', country: 'FR' } }, notes: 'Call me on 06 12 34 56 78' } })).body.id as number;
    const open = await place();
    const delivered = await place();
    for (const status of ['approved', 'shipped', 'delivered']) {
      await t.http.request('PATCH', `/v2/orders/${delivered}`, { headers: { ...staff, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ status }) });
    }
    expect((await t.http.delete(`/v2/customer/${username}`, { headers: bearer(token) })).status).toBe(204);
    const kept = await Promise.all([open, delivered].map(async (id) => (await t.http.get(`/v2/orders/${id}`, { headers: staff })).body));
    expect(kept.map((o) => o.status)).toEqual(['cancelled', 'delivered']);
    for (const order of kept) expect(order).toMatchObject({ customer: null, notes: null, shippingAddress: { street: '(removed)', zipCode: null, city: 'Montbrison', country: 'FR' } });
    expect((await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: staff })).body.stockQuantityKg).toBe(9);
  });
});

describe('customerStatus', () => {
  it('follows delivered kilograms over 12 months: silver from 10 kg, and back to bronze as they age out', async () => {
    const username = 'tier.customer';
    const password = 'a long enough secret 4 tests';
    expect((await t.http.post('/v2/customer', { json: { username, email: 'tier@example.com', password } })).status).toBe(201);
    const token = bearer((await login(t, username, password)).body.token);
    const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Tiered Tomme', pricePerKg: 15, stockQuantityKg: 50 } })).body;
    const deliver = async (kg: number) => {
      const id = (await t.http.post('/v2/orders', { headers: token, json: { items: [{ cheeseId: cheese.id, quantity_kg: kg }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } } })).body.id;
      for (const status of ['approved', 'shipped', 'delivered']) {
        await t.http.request('PATCH', `/v2/orders/${id}`, { headers: { ...staff, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ status }) });
      }
    };
    const status = async () => (await t.http.get(`/v2/customer/${username}`, { headers: token })).body.customerStatus;
    await deliver(6);
    expect(await status()).toBe('bronze');
    await deliver(4);
    expect(await status()).toBe('silver');
    const accountId = (await t.http.get(`/v2/customer/${username}`, { headers: token })).body.id;
    const events = await t.database.db.selectFrom('outbox').select('data').where('type', '=', 'customer.updated').where('aggregate_id', '=', String(accountId)).execute();
    expect(events.map((e) => JSON.parse(e.data))).toEqual([expect.objectContaining({ customer_status: 'silver', changed: ['customerStatus'] })]);
    const later = new Date(Date.now() + 366 * 86_400_000);
    expect(await t.runJob('customer-tiers', later)).toBeGreaterThanOrEqual(1);
    expect(await status()).toBe('bronze');
    expect(await t.runJob('customer-tiers', later)).toBe(0);
  });
});

describe('recommendations', () => {
  it('never a cheese of a milk the customer is allergic to; favourites first, with reasons; only their own', async () => {
    const username = 'taster';
    const password = 'a long enough secret 4 tests';
    expect((await t.http.post('/v2/customer', { json: { username, email: 'taster@example.com', password } })).status).toBe(201);
    const token = bearer((await login(t, username, password)).body.token);
    expect((await t.http.put(`/v2/customer/${username}/preferences`, { headers: token, json: { milkAllergies: ['goat', 'cow'], favouriteMilks: ['sheep'], favouriteCountries: ['France'] } })).status).toBe(200);
    const res = await t.http.get(`/v2/customer/${username}/recommendations?limit=10`, { headers: token });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(10);
    for (const { cheese } of res.body.items) expect(['goat', 'cow']).not.toContain(cheese.milk);
    expect(res.body.items[0]).toMatchObject({ cheese: { milk: 'sheep', origin: 'France' }, reasons: expect.arrayContaining(['you like sheep milk', 'you like cheeses from France']) });
    const scores = res.body.items.map((i: { score: number }) => i.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    const stranger = bearer(await t.key(['read:profile'], 'customer'));
    expect((await t.http.get(`/v2/customer/${username}/recommendations`, { headers: stranger })).status).toBe(403);
  });
});
