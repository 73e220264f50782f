import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { freePort } from '../helpers/oauth.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * `delivery_success=false` over any number of events (issue 21): the webhooks module hands the
 * log a subquery of the outbox ids with a delivery pending or dead-lettered, so a client pages
 * through every one of them, past the 1,000 the filter used to look at. No dispatcher runs:
 * the fan-out is run here, so the deliveries stay pending (nothing attempts them).
 */
const CHEESES = 1010;
const BULK = 100;

let t: TestApp;
let receiver: Receiver;
let staff: Record<string, string>;

interface Item {
  id: string;
  type: string;
  pending_webhooks: number;
}

beforeAll(async () => {
  receiver = await new Receiver().start();
  t = await createTestApp();
  staff = bearer(await t.key(['admin']));
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** Every item of a listing, page by page through `nextCursor`; asserts each page's size. */
async function walk(query: string, headers = staff): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const res = await t.http.get(`/v2/events?${query}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body.items.length).toBeLessThanOrEqual(100);
    if (res.body.hasMore) expect(res.body.items).toHaveLength(100);
    items.push(...(res.body.items as Item[]));
    cursor = res.body.nextCursor as string | null;
  } while (cursor !== null);
  return items;
}

describe('delivery_success=false', () => {
  it('pages through every undelivered event, past a thousand, and never lists a delivered one', async () => {
    const closed = await freePort();
    const failing = await t.http.post('/v2/webhooks', { headers: staff, json: { url: `http://127.0.0.1:${closed}/nobody`, events: ['cheese.*'] } });
    const answering = await t.http.post('/v2/webhooks', { headers: staff, json: { url: receiver.url('/ok'), events: ['order.*'] } });
    expect([failing.status, answering.status]).toEqual([201, 201]);
    for (let from = 0; from < CHEESES; from += BULK) {
      const operations = Array.from({ length: Math.min(BULK, CHEESES - from) }, (_, i) => ({ op: 'create', cheese: { name: `Undelivered ${from + i}`, pricePerKg: 20, stockQuantityKg: 5 } }));
      const bulk = await t.http.post('/v2/cheeses/bulk', { headers: staff, json: { operations } });
      expect(bulk.status, bulk.text).toBe(200);
      expect(bulk.body.results.every((r: { status: number }) => r.status === 201)).toBe(true);
    }
    // A test is one attempt at once: dead-lettered at the closed port, delivered at the receiver.
    const dead = await t.http.post(`/v2/webhooks/${failing.body.id}/test`, { headers: staff });
    const delivered = await t.http.post(`/v2/webhooks/${answering.body.id}/test`, { headers: staff });
    expect([dead.body.outcome, delivered.body.outcome]).toEqual(['dead_lettered', 'delivered']);

    // On PostgreSQL the log lists an event once no transaction that began writing before it is
    // open anywhere on the server (other test files' too): once the last event written here is
    // listed, every earlier one is, and the walks below see the same log.
    for (let i = 0; i < 400; i++) {
      const newestFirst = await t.http.get('/v2/events?limit=5', { headers: staff });
      if (newestFirst.body.items.some((item: Item) => item.id === delivered.body.eventId)) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    // The fan-out goes in log order: once the newest cheese event has its delivery, every one has.
    const { dispatcher } = t.app.modules.webhooks.provides;
    const newest = (await t.http.get('/v2/events?type=cheese.*&limit=1', { headers: staff })).body.items[0] as Item;
    for (let i = 0; i < 200; i++) {
      await dispatcher.fanOut();
      if ((await t.http.get(`/v2/events/${newest.id}`, { headers: staff })).body.pending_webhooks === 1) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect((await t.http.get(`/v2/events/${newest.id}`, { headers: staff })).body.pending_webhooks).toBe(1);

    const all = await walk('order=desc');
    const cheeseEvents = all.filter((item) => item.type.startsWith('cheese.'));
    expect(cheeseEvents.length).toBeGreaterThanOrEqual(CHEESES);
    const undelivered = await walk('delivery_success=false');
    // Exactly every event but the delivered one, newest first, each once.
    expect(undelivered.map((item) => item.id)).toEqual(all.filter((item) => item.id !== delivered.body.eventId).map((item) => item.id));
    expect(undelivered.length).toBeGreaterThan(1000);
    expect(undelivered.map((item) => item.id)).toContain(dead.body.eventId);
    expect(undelivered.every((item) => item.pending_webhooks === 1)).toBe(true);
    expect((await t.http.get(`/v2/events/${delivered.body.eventId}`, { headers: staff })).body.pending_webhooks).toBe(0);

    // An account counts its own webhooks only: a customer's have nothing undelivered.
    const customer = bearer(await t.key(['read:cheeses'], 'customer'));
    const own = await t.http.get('/v2/events?delivery_success=false', { headers: customer });
    expect(own.status).toBe(200);
    expect(own.body.items).toEqual([]);
    expect((await t.http.get('/v2/events?type=cheese.*&limit=1', { headers: customer })).body.items).toHaveLength(1);
  });
});
