import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, type HttpResponse } from '../helpers/http.js';

/**
 * Issue 17: a body's problems are named in one 422, all of them. The country code is judged by
 * the schema (format `country-code`), with the quantities, so an order with a quantity of 0 and
 * the country `ZZ` names both fields, and nothing is created. Checks that need the database
 * (an unknown cheese) run only on a body the schema accepts (docs/decisions.md, issue 17).
 */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

const PASSWORD = 'a long enough secret 4 tests';
let seq = 0;
const fields = (res: HttpResponse) => (res.body.errors as { field: string }[]).map((e) => e.field);
const COUNTRY = 'is not an ISO 3166-1 alpha-2 country code';

async function cheese(): Promise<{ id: number; slug: string }> {
  const res = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `One 422 cheese ${++seq}`, pricePerKg: 20, stockQuantityKg: 20, status: 'available' } });
  expect(res.status).toBe(201);
  return res.body;
}
const customer = async () => bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
async function signedUp(): Promise<{ username: string; token: Record<string, string> }> {
  const username = `one.422.${++seq}`;
  expect((await t.http.post('/v2/customer', { json: { username, email: `one422.${seq}@example.com`, password: PASSWORD } })).status).toBe(201);
  return { username, token: bearer((await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token) };
}
/** What an order would have changed: the order rows, the cheese's stock, the outbox. */
async function state(cheeseId: number) {
  const count = async (table: 'orders' | 'order_items' | 'outbox') => Number((await t.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const stock = (await t.http.get(`/v2/cheeses/${cheeseId}`, { headers: staff })).body.stockQuantityKg as number;
  return { orders: await count('orders'), items: await count('order_items'), outbox: await count('outbox'), stock };
}

describe('one 422 names every bad field of an order', () => {
  it('Form B: quantity_kg 0 and country ZZ are named together; nothing is created', async () => {
    const a = await cheese();
    const me = await customer();
    const before = await state(a.id);
    const res = await t.http.post('/v2/orders', { headers: me, json: { items: [{ cheeseId: a.slug, quantity_kg: 0 }], shipping: { method: 'standard', address: { line1: '12 rue des Fromagers', city: 'Lyon', country: 'ZZ' } } } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 422, type: 'validation_failed' });
    expect(res.body.errors).toEqual([
      { field: 'items.0.quantity_kg', message: 'must be >= 0.1' },
      { field: 'shipping.address.country', message: COUNTRY },
    ]);
    expect(res.body.message).toContain('shipping.address.country');
    expect(await state(a.id)).toEqual(before);
  });

  it('Form A: quantity 0 and country ZZ are named together; nothing is created', async () => {
    const a = await cheese();
    const me = await customer();
    const before = await state(a.id);
    const res = await t.http.post('/v2/store/order', { headers: me, json: { items: [{ cheeseId: a.id, quantity: 0 }], shippingAddress: { street: '1 Main St', city: 'Springfield', country: 'ZZ' } } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { field: 'items.0.quantity', message: 'must be >= 1' },
      { field: 'shippingAddress.country', message: COUNTRY },
    ]);
    expect(await state(a.id)).toEqual(before);
  });

  it('every line and field at once: a step off 0.05 kg, a quantity over 100, an empty city, a country that is not two letters', async () => {
    const a = await cheese();
    const me = await customer();
    const before = await state(a.id);
    const res = await t.http.post('/v2/orders', {
      headers: me,
      json: { items: [{ cheeseId: a.slug, quantity_kg: 0.33 }, { cheeseId: a.id, quantity_kg: 101 }], shipping: { method: 'standard', address: { line1: '12 rue des Fromagers', city: '', country: 'ıt' } } },
    });
    expect(res.status).toBe(422);
    expect(new Set(fields(res))).toEqual(new Set(['items.0.quantity_kg', 'items.1.quantity_kg', 'shipping.address.city', 'shipping.address.country']));
    expect(await state(a.id)).toEqual(before);
  });

  it('a body the schema accepts: unknown cheeses are looked up and named together, lower-case countries still accepted', async () => {
    const a = await cheese();
    const me = await customer();
    const res = await t.http.post('/v2/orders', { headers: me, json: { items: [{ cheeseId: 'no-such-cheese', quantity_kg: 1 }, { cheeseId: 987654, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 rue', city: 'Lyon', country: 'fr' } } } });
    expect([res.status, fields(res)]).toEqual([422, ['items.0.cheeseId', 'items.1.cheeseId']]);
    const placed = await t.http.post('/v2/orders', { headers: me, json: { items: [{ cheeseId: a.slug, quantity_kg: 0.35 }], shipping: { method: 'standard', address: { line1: '1 rue', city: 'Lyon', country: 'fr' } } } });
    expect([placed.status, placed.body.shippingAddress?.country, placed.body.items?.[0]?.quantityKg]).toEqual([201, 'FR', 0.35]);
    // The owner's patch of the address takes the same check, with the other fields.
    const patched = await t.http.patch(`/v2/orders/${placed.body.id}`, { headers: me, json: { notes: '', shippingAddress: { country: 'ZZ' } } });
    expect([patched.status, new Set(fields(patched))]).toEqual([422, new Set(['notes', 'shippingAddress.country'])]);
  });
});

describe('every address takes the same country check', () => {
  it('a customer address: country ZZ with an empty line1, both named; nothing stored', async () => {
    const me = await signedUp();
    const base = `/v2/customer/${me.username}/addresses`;
    const res = await t.http.post(base, { headers: me.token, json: { line1: '', city: 'Lyon', country: 'ZZ' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([{ field: 'country', message: COUNTRY }]));
    expect(new Set(fields(res))).toEqual(new Set(['line1', 'country']));
    expect((await t.http.get(base, { headers: me.token })).body.items).toEqual([]);
  });

  it('a subscription: quantity_kg 0 and country ZZ named together (ZZ was accepted before); nothing saved', async () => {
    const me = await signedUp();
    const url = `/v2/customer/${me.username}/subscription`;
    const res = await t.http.put(url, { headers: me.token, json: { quantity_kg: 0, shipping: { method: 'standard', address: { line1: '5 Cheese Row', city: 'Annecy', country: 'ZZ' } } } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { field: 'quantity_kg', message: 'must be >= 0.1' },
      { field: 'shipping.address.country', message: COUNTRY },
    ]);
    expect((await t.http.get(url, { headers: me.token })).status).toBe(404);
  });

  it('bodies are judged whole, but one 422 names at most 500 problems (a body of 5,000 unknown fields)', async () => {
    const me = await signedUp();
    const json: Record<string, unknown> = { line1: '1 rue', city: 'Lyon', country: 'FR' };
    for (let i = 0; i < 5000; i++) json[`extra${i}`] = i;
    const res = await t.http.post(`/v2/customer/${me.username}/addresses`, { headers: me.token, json });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveLength(500);
    expect(res.body.errors[0]).toEqual({ field: 'extra0', message: 'is not a known field' });
  });
});

describe('every route\'s body is validated alike', () => {
  // Fastify gave the plugins that add shared schemas (customers, OAuth clients, webhooks) its
  // default Ajv, which dropped unknown fields silently and coerced "7" to 7.
  it('sign-up and preferences refuse an unknown field and text for a number, as every body does', async () => {
    const signUp = await t.http.post('/v2/customer', { json: { username: 'strict.signup', email: 'strict@example.com', password: PASSWORD, nickname: 'Strict' } });
    expect([signUp.status, fields(signUp)]).toEqual([422, ['nickname']]);
    const me = await signedUp();
    const preferences = await t.http.put(`/v2/customer/${me.username}/preferences`, { headers: me.token, json: { maxStinkiness: '7' } });
    expect([preferences.status, new Set(fields(preferences))]).toEqual([422, new Set(['maxStinkiness'])]);
  });
});

describe('a refusal with rate limits on', () => {
  const LIMITS: RateLimitSettings = { enabled: true, free: { perHour: 36, burst: 10 }, pro: { perHour: 36_000, burst: 20 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1000 };
  it('POST /v2/cheeses with a customer\'s login token: 403 carrying RateLimit-Policy and RateLimit', async () => {
    const limited = await createTestApp({ config: { rateLimits: LIMITS } });
    try {
      const username = 'limited.customer';
      expect((await limited.http.post('/v2/customer', { json: { username, email: 'limited@example.com', password: PASSWORD } })).status).toBe(201);
      const login = await limited.http.post('/v2/customer/login', { json: { username, password: PASSWORD } });
      expect(login.status).toBe(200);
      const res = await limited.http.post('/v2/cheeses', { headers: bearer(login.body.token), json: { name: 'Not theirs to add' } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 403, type: 'forbidden' });
      expect(res.headers.get('ratelimit-policy')).toBe('"free";q=36;w=3600, "per-minute";q=1000;w=60');
      expect(res.headers.get('ratelimit')).toMatch(/^"free";r=\d+;t=\d+$/);
    } finally {
      await limited.close();
    }
  });
});
