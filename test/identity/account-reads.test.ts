import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * What other modules show of an account now that they ask identity for it instead of joining
 * `accounts` (issue 21, test/architecture/table-ownership.test.ts): orders' `customer`,
 * webhooks' `owner` and filters by owner, a customer's profile and favourite cheese.
 */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

const PASSWORD = 'a long enough secret 4 tests';
let seq = 0;
/** A signed-up customer whose username has capitals (lookups by username ignore case; the stored spelling is what is shown). */
async function customer(extra: Record<string, unknown> = {}): Promise<{ username: string; auth: Record<string, string> }> {
  const username = `Reader.${++seq}.${process.pid}`;
  const created = await t.http.post('/v2/customer', { json: { username, email: `reader${seq}.${process.pid}@example.com`, password: PASSWORD, ...extra } });
  expect(created.status).toBe(201);
  const login = await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } });
  return { username, auth: bearer(login.body.token) };
}

const ORDER = (cheeseId: number) => ({ items: [{ cheeseId, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } });

describe('orders name their customer', () => {
  it('every order of a page shows its own customer\'s username, on every page; a deleted account\'s orders show null, the others\' are unchanged', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Ownership Comté', pricePerKg: 30, stockQuantityKg: 100 } })).body as { id: number };
    const people = [await customer(), await customer(), await customer()];
    const placed: { id: number; username: string }[] = [];
    for (let i = 0; i < 9; i++) {
      const who = people[i % 3]!;
      const res = await t.http.post('/v2/orders', { headers: who.auth, json: ORDER(cheese.id) });
      expect(res.status).toBe(201);
      expect(res.body.customer).toBe(who.username);
      placed.push({ id: res.body.id as number, username: who.username });
    }
    const expected = placed.map((order) => ({ id: order.id, customer: order.username })).reverse();
    const listed: { id: number; customer: string | null }[] = [];
    let cursor: string | undefined;
    do {
      const page = await t.http.get(`/v2/orders?limit=4${cursor ? `&cursor=${cursor}` : ''}`, { headers: staff });
      expect(page.status).toBe(200);
      listed.push(...(page.body.items as { id: number; customer: string | null }[]).map(({ id, customer }) => ({ id, customer })));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(listed.filter((order) => placed.some((p) => p.id === order.id))).toEqual(expected);
    // Staff filter by a customer in any case; the answer spells the username as it was registered.
    const byCustomer = await t.http.get(`/v2/orders?limit=100&customer=${people[1]!.username.toUpperCase()}`, { headers: staff });
    expect(byCustomer.body.items.map((order: { id: number; customer: string }) => [order.id, order.customer])).toEqual(expected.filter((o) => o.customer === people[1]!.username).map((o) => [o.id, o.customer]));

    const gone = people[0]!;
    expect((await t.http.delete(`/v2/customer/${gone.username}`, { headers: gone.auth })).status).toBe(204);
    for (const order of placed) {
      const res = await t.http.get(`/v2/orders/${order.id}`, { headers: staff });
      expect(res.status).toBe(200);
      expect(res.body.customer).toBe(order.username === gone.username ? null : order.username);
    }
    // A change of the order (staff cancel) keeps its customer in the answer and in the event.
    const kept = placed.find((order) => order.username === people[2]!.username)!;
    const patched = await t.http.patch(`/v2/orders/${kept.id}`, { headers: staff, json: { status: 'cancelled' } });
    expect(patched.status).toBe(200);
    expect(patched.body.customer).toBe(people[2]!.username);
    const event = await t.database.db.selectFrom('outbox').select('data').where('type', '=', 'order.cancelled').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(event.data)).toMatchObject({ order_id: String(kept.id), customer: people[2]!.username });
  });
});

describe('webhooks name their owner', () => {
  const register = async (auth: Record<string, string>, path: string) => {
    const res = await t.http.post('/v2/webhooks', { headers: auth, json: { url: `http://127.0.0.1:9/${path}`, events: ['order.placed'] } });
    expect(res.status).toBe(201);
    return res.body as { id: number; owner: string };
  };

  it('each webhook shows its owner\'s username; staff filter by owner in any case; an unknown owner has none', async () => {
    const alice = await customer();
    const bob = await customer();
    const hooks = [await register(alice.auth, 'a1'), await register(bob.auth, 'b1'), await register(alice.auth, 'a2')];
    expect(hooks.map((hook) => hook.owner)).toEqual([alice.username, bob.username, alice.username]);
    const all = (await t.http.get('/v2/webhooks?limit=100', { headers: staff })).body.items as { id: number; owner: string }[];
    expect(all.filter((hook) => hooks.some((h) => h.id === hook.id)).map((hook) => [hook.id, hook.owner])).toEqual(hooks.map((hook) => [hook.id, hook.owner]));
    const byOwner = await t.http.get(`/v2/webhooks?account=${alice.username.toLowerCase()}`, { headers: staff });
    expect(byOwner.body.items.map((hook: { id: number; owner: string }) => [hook.id, hook.owner])).toEqual([[hooks[0]!.id, alice.username], [hooks[2]!.id, alice.username]]);
    expect((await t.http.get('/v2/webhooks?account=nobody.at.all', { headers: staff })).body.items).toEqual([]);
    // A customer naming someone else (in any case) sees none; naming themselves, their own.
    expect((await t.http.get(`/v2/webhooks?account=${bob.username.toUpperCase()}`, { headers: alice.auth })).body.items).toEqual([]);
    expect((await t.http.get(`/v2/webhooks?account=${alice.username.toUpperCase()}`, { headers: alice.auth })).body.items.map((hook: { id: number }) => hook.id)).toEqual([hooks[0]!.id, hooks[2]!.id]);
    expect((await t.http.get('/v2/webhooks/dead-letters?account=nobody.at.all', { headers: staff })).body.items).toEqual([]);
  });

  it('an account holds at most 10 webhooks, even when 40 registrations race (identity locks the account)', async () => {
    const carol = await customer();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => t.http.post('/v2/webhooks', { headers: carol.auth, json: { url: `http://127.0.0.1:9/race${i}`, events: ['order.placed'] } })));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(10).fill(201), ...Array(30).fill(409)]);
    expect((await t.http.get('/v2/webhooks?limit=100', { headers: carol.auth })).body.items).toHaveLength(10);
  });
});

describe('a customer is an account of role customer with a profile', () => {
  it('shows the favourite cheese under its current name, and staff accounts are no customers (404)', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Tomme Before' } })).body as { id: number };
    const fan = await customer({ favouriteCheese: { cheeseId: cheese.id } });
    expect((await t.http.get(`/v2/customer/${fan.username}`, { headers: fan.auth })).body.favouriteCheese).toEqual({ cheeseId: cheese.id, name: 'Tomme Before' });
    expect((await t.http.post(`/v2/cheeses/${cheese.id}?name=Tomme%20After`, { headers: staff })).status).toBe(200);
    const after = await t.http.get(`/v2/customer/${fan.username.toLowerCase()}`, { headers: staff });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ username: fan.username, favouriteCheese: { cheeseId: cheese.id, name: 'Tomme After' } });
    expect((await t.http.get('/v2/customer/admin', { headers: staff })).status).toBe(404);
  });
});
