import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * Issue 28: an event others see (a public `cheese.*` one) never carries the request
 * identifiers of the customer whose order caused it: neither in the event log (list and
 * single event) nor in another account's webhook delivery. The customer's own `order.placed`
 * still does.
 */
let t: TestApp;
let receiver: Receiver;
let staff: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({ workers: true });
  receiver = await new Receiver().start();
  staff = bearer(await t.key(['admin']));
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** The log's events matching `query` once there are `count` (PostgreSQL lists an event a few milliseconds after its commit). */
async function listed(query: string, headers: Record<string, string>, count = 1) {
  for (let i = 0; i < 200; i++) {
    const res = await t.http.get(`/v2/events${query}`, { headers });
    expect(res.status).toBe(200);
    if (res.body.items.length >= count) return res;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${query} never listed ${count}`);
}

describe('an event caused by a customer\'s order', () => {
  it('carries the customer\'s request identifiers on their own order.placed only, never on the public cheese.low_stock', async () => {
    const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Low stock Morbier ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 6, status: 'available' } });
    expect(cheese.status).toBe(201);
    // Another account: it reads the catalogue's events and receives every cheese.* event by webhook.
    const other = bearer(await t.key(['read:cheeses'], 'customer'));
    const hook = await t.http.post('/v2/webhooks', { headers: other, json: { url: receiver.url('/other'), events: ['cheese.*'] } });
    expect(hook.status).toBe(201);

    const customer = bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
    const identifiers = { 'idempotency-key': `order-low-${Date.now()}`, 'x-request-id': `req-low-${Date.now()}` };
    const order = await t.http.post('/v2/orders', {
      headers: { ...customer, ...identifiers },
      json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 2 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } },
    });
    expect(order.status).toBe(201);
    expect(order.body.customer).toEqual(expect.any(String));
    const me = order;
    /** Anything of the customer in an envelope: their request's identifiers, their order, their name or account. */
    const leaks = (text: string) => {
      const parsed = JSON.parse(text) as { items?: object[] };
      const found: string[] = [];
      const visit = (value: unknown, key: string) => {
        if (['order_id', 'customer', 'customer_id', 'username', 'account_id', 'address', 'shipping'].includes(key)) found.push(key);
        if (typeof value === 'string' && [identifiers['idempotency-key'], identifiers['x-request-id'], me.body.customer].includes(value)) found.push(value);
        if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) visit(v, k);
      };
      visit(parsed, '');
      return found;
    };

    // The event log, as the other account reads it: the list and the single event, the same bytes.
    const list = await listed(`?type=cheese.low_stock&object_type=cheese&object_id=${cheese.body.id}`, other);
    const event = list.body.items[0];
    expect(event.metadata).toMatchObject({ request_id: null, idempotency_key: null, object_type: 'cheese', object_id: String(cheese.body.id) });
    expect(leaks(list.text)).toEqual([]);
    const one = await t.http.get(`/v2/events/${event.id}`, { headers: other });
    expect(one.status).toBe(200);
    expect(one.body.metadata).toMatchObject({ request_id: null, idempotency_key: null });
    expect(leaks(one.text)).toEqual([]);

    // The other account's webhook: the same envelope, nothing of the customer's request.
    // Other cheese.* events may reach /other first: wait for the low_stock one itself.
    const lowStockAt = () => receiver.received.find((r) => r.path === '/other' && JSON.parse(r.raw).type === 'cheese.low_stock');
    for (const deadline = Date.now() + 15_000; !lowStockAt() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    const delivered = lowStockAt()!;
    expect(delivered).toBeDefined();
    expect(JSON.parse(delivered.raw).metadata).toMatchObject({ request_id: null, idempotency_key: null });
    expect(leaks(delivered.raw)).toEqual([]);
    expect(one.text).toContain(delivered.raw.slice(0, -1));

    // The customer's own order.placed keeps both.
    const placed = await listed(`?type=order.placed&object_type=order&object_id=${order.body.id}`, customer);
    expect(placed.body.items[0].metadata).toMatchObject({ request_id: identifiers['x-request-id'], idempotency_key: identifiers['idempotency-key'] });
  }, 30_000);
});

describe('an event of one account caused by staff', () => {
  it('carries none of staff\'s request identifiers: the customer sees their order confirmed and cancelled by staff without staff\'s request id (probe 28)', async () => {
    const customer = bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
    const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Staff-moved Tomme ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 50, status: 'available' } });
    expect(cheese.status).toBe(201);
    const own = `req-own-${Date.now()}`;
    const order = await t.http.post('/v2/orders', {
      headers: { ...customer, 'x-request-id': own },
      json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } },
    });
    expect(order.status, order.text).toBe(201);
    const advanced = await t.http.post(`/v2/sandbox/orders/${order.body.id}/advance`, { headers: { ...staff, 'x-request-id': `req-staff-advance-${Date.now()}` } });
    expect(advanced.status, advanced.text).toBe(200);
    const cancelled = await t.http.patch(`/v2/orders/${order.body.id}`, { headers: { ...staff, 'x-request-id': `req-staff-cancel-${Date.now()}`, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ status: 'cancelled' }) });
    expect(cancelled.status, cancelled.text).toBe(200);
    const events = await listed(`?object_type=order&object_id=${order.body.id}`, customer, 3);
    const byType = Object.fromEntries(events.body.items.map((e: { type: string; metadata: object }) => [e.type, e.metadata]));
    expect(Object.keys(byType).sort()).toEqual(['order.cancelled', 'order.confirmed', 'order.placed']);
    expect(byType['order.placed']).toMatchObject({ request_id: own });
    expect(byType['order.confirmed']).toMatchObject({ request_id: null, idempotency_key: null });
    expect(byType['order.cancelled']).toMatchObject({ request_id: null, idempotency_key: null });
    expect(events.text).not.toContain('req-staff-');
  }, 30_000);
});
