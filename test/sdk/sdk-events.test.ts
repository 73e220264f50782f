import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Fromagerie, type Event } from '../../packages/sdk/src/index.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { EdgeProxy } from './edge-proxy.js';

let t: TestApp;
let edge: EdgeProxy;
let sdk: Fromagerie;
let cheeseSlug: string;

beforeAll(async () => {
  const made = await createAdminTestApp();
  t = made.t;
  edge = await new EdgeProxy(t.http.baseUrl).start();
  sdk = new Fromagerie({ apiKey: await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'), baseUrl: edge.url });
  const cheese = await t.http.post('/v2/cheeses', { headers: made.auth, json: { name: 'Event log reblochon', pricePerKg: 22, stockQuantityKg: 400, status: 'available' } });
  cheeseSlug = cheese.body.slug;
});
afterAll(async () => {
  await edge.close();
  await t.close();
});
beforeEach(() => edge.reset());

const placeOrder = () => sdk.orders.create({ items: [{ cheeseId: cheeseSlug, quantity_kg: 0.5 }], shipping: { method: 'standard', address: { line1: '3 rue', city: 'Annecy', country: 'FR' } } });
/** The ids of the order events in the outbox, in the log's order. */
const orderEventIds = async (orderIds: number[]) =>
  (await t.database.db.selectFrom('outbox').select(['event_id']).where('aggregate_type', '=', 'order').where('aggregate_id', 'in', orderIds.map(String)).orderBy('txid').orderBy('id').execute()).map((row) => row.event_id);

/**
 * On PostgreSQL the log lists an event once no transaction begun before it is still open,
 * anywhere on the server (other tests' too): waits until the order's events are listed.
 */
async function listed(orderId: number): Promise<Event[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const page = await sdk.events.list({ object_type: 'order', object_id: String(orderId) });
    if (page.items.length > 0) return page.items;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the events of order ${orderId} were never listed`);
}

describe('the event log through the SDK', () => {
  it("list filters by object, get reads one, listAll yields each event once", async () => {
    const order = await placeOrder();
    const items = await listed(order.id);
    expect(items.map((e) => e.type)).toEqual(['order.placed']);
    const [placed] = items as [Event];
    expect(placed.id).toBe((await orderEventIds([order.id]))[0]);
    if (placed.type !== 'order.placed') throw new Error('narrowing');
    expect(placed.data.order_id).toBe(String(order.id));
    expect(await sdk.events.get(placed.id)).toEqual(placed);
    const other = await placeOrder();
    await listed(other.id);
    const all: string[] = [];
    for await (const event of sdk.events.listAll({ limit: 1, type: ['order.*'] })) all.push(event.id);
    // Newest first, one page each, every one once: exactly this customer's order events.
    expect(all).toEqual((await orderEventIds([order.id, other.id])).reverse());
  });

  it('tail long-polls: each new event once, in the log order, each poll held (wait) and going on from nextAfter; ends on abort', async () => {
    await listed((await placeOrder()).id); // listed before the tail starts: not yielded
    const stop = new AbortController();
    const seen: string[] = [];
    const tail = (async () => {
      for await (const event of sdk.events.tail({ types: ['order.placed'], signal: stop.signal, waitSeconds: 5 })) {
        seen.push(event.id);
        if (seen.length === 3) stop.abort();
      }
    })();
    // Let the first poll (after=now) reach the server and be held, then make three orders.
    for (let wait = 0; !edge.seen.some((r) => r.path.startsWith('/v2/events?') && r.path.includes('after=now')); wait++) {
      if (wait === 1000) throw new Error('the tail never polled from now');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const orders = [await placeOrder(), await placeOrder(), await placeOrder()];
    await tail;
    expect(seen).toEqual(await orderEventIds(orders.map((o) => o.id)));
    const polls = edge.seen.filter((r) => r.path.startsWith('/v2/events?') && r.path.includes('wait=5'));
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((r) => r.path.includes('type=order.placed'))).toBe(true);
    // After the first, every poll goes on from the previous answer's nextAfter.
    expect(polls.slice(1).every((r) => !r.path.includes('after=now'))).toBe(true);
  });

  it('tail from a given event yields those after it, then waits', async () => {
    const first = await placeOrder();
    const second = await placeOrder();
    const [firstEvent] = await orderEventIds([first.id]);
    const stop = new AbortController();
    const got: Event[] = [];
    for await (const event of sdk.events.tail({ after: firstEvent!, types: ['order.*'], signal: stop.signal, waitSeconds: 5 })) {
      got.push(event);
      stop.abort();
    }
    expect(got.map((e) => e.id)).toEqual(await orderEventIds([second.id]));
  });
});
