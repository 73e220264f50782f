import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestStorage, type TestStorage } from '../helpers/database.js';
import { bearer } from '../helpers/http.js';

/**
 * The long poll of the event log (`wait`, `after=now`, `nextAfter`): a held request answers
 * with the first event it would list as soon as it is visible (here: well before its wait
 * ends, so an answer at the deadline would be an empty page and fail the test), keeps its
 * filters while held, counts against a per-account limit, and ends when the client leaves or
 * the instance closes.
 */
let storage: TestStorage;
let t: TestApp;
let staff: Record<string, string>;
let alice: Record<string, string>;
let cheeseId: number;
let run = 0;

const ORDER = (id: number) => ({ items: [{ cheeseId: id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } });

let lastCheese: number | undefined;

async function newCheese(): Promise<number> {
  const res = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Held cheese ${++run} ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 500 } });
  expect(res.status).toBe(201);
  lastCheese = res.body.id as number;
  return lastCheese;
}

/**
 * Waits until the log lists the last cheese this file made. On PostgreSQL an event is listed
 * once no transaction older than it is still open anywhere on the server (other test files'
 * included), so `after=now` (the head of what is listed) could start before an event made
 * earlier; once that one is listed, the only new event is the next one made.
 */
async function settled(): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const newest = await events('?limit=1&type=cheese.new_arrival');
    if (newest.body.items[0]?.data.cheese_id === String(lastCheese)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`cheese ${lastCheese}'s event was never listed`);
}

const events = (query: string, headers = staff) => t.http.get(`/v2/events${query}`, { headers });

/** A held request whose client can go away (`leave`): node:http, so leaving closes its own connection. */
function heldRequest(query: string, headers = staff): { leave: () => void; ended: Promise<void> } {
  const request = http.get(`${t.http.baseUrl}/v2/events${query}`, { headers, agent: false });
  const ended = new Promise<void>((resolve) => {
    request.on('response', (response) => response.resume().on('end', resolve));
    request.on('error', () => resolve());
    request.on('close', () => resolve());
  });
  return { leave: () => request.destroy(), ended };
}

/** Lets a request reach the server and be held before the test goes on. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

beforeAll(async () => {
  storage = await createTestStorage();
  t = await createTestApp({ storage, config: { eventsMaxHeldPerAccount: 3 } });
  staff = bearer(await t.key(['admin']));
  alice = bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
  cheeseId = await newCheese();
});
afterAll(async () => {
  await t.close();
  await storage.dispose();
});

describe('GET /v2/events?wait= holds the request until an event arrives', () => {
  it('after=now answers with the first new event, not one before it, long before the wait ends', async () => {
    await settled();
    const held = events('?after=now&wait=20&type=cheese.new_arrival');
    await settle();
    const created = await newCheese();
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.body.items.map((e: { data: { cheese_id: string } }) => e.data.cheese_id)).toEqual([String(created)]);
    expect(res.body.nextAfter).toBe(res.body.items[0].id);
  });

  it('keeps its filters while held: an event of another kind does not answer it', async () => {
    const held = events('?after=now&wait=20&type=order.placed', alice);
    await settle();
    await newCheese();
    const order = await t.http.post('/v2/orders', { headers: alice, json: ORDER(cheeseId) });
    expect(order.status).toBe(201);
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.body.items.map((e: { type: string }) => e.type)).toEqual(['order.placed']);
  });

  it('an empty page at the end of the wait gives nextAfter, from which the next poll goes on without a gap', async () => {
    await settled();
    const empty = await events('?after=now&wait=1&type=cheese.new_arrival');
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ items: [], hasMore: false, nextCursor: null, nextAfter: expect.stringMatching(/^pos_/) });
    const created = await newCheese();
    const next = await events(`?after=${empty.body.nextAfter}&wait=20&type=cheese.new_arrival`);
    expect(next.body.items.map((e: { data: { cheese_id: string } }) => e.data.cheese_id)).toEqual([String(created)]);
  });

  it('answers at once when events past after are visible already', async () => {
    await settled();
    const first = await events('?after=now&type=cheese.new_arrival');
    const created = await newCheese();
    const res = await events(`?after=${first.body.nextAfter}&wait=20&type=cheese.new_arrival`);
    expect(res.body.items.map((e: { data: { cheese_id: string } }) => e.data.cheese_id)).toEqual([String(created)]);
  });

  it('refuses what it cannot honour with a 400 naming the parameter', async () => {
    for (const [query, field] of [
      ['?wait=5', 'wait'],
      ['?after=now&wait=26', 'wait'],
      ['?after=now&wait=-1', 'wait'],
      ['?after=now&order=desc', 'after'],
      ['?after=pos_AAAA.BBBB', 'after'],
      ['?after=yesterday', 'after'],
    ] as const) {
      const res = await events(query);
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body), query).toContain(field);
    }
  });

  it('a position given for one deployment environment is refused in another (signed, bound to it)', async () => {
    const empty = await events('?after=now&type=cheese.new_arrival');
    const sandbox = await createTestApp({ env: 'sandbox', storage, config: { eventsMaxHeldPerAccount: 3 } });
    try {
      const res = await sandbox.http.get(`/v2/events?after=${empty.body.nextAfter}`, { headers: bearer(await sandbox.key(['admin'])) });
      expect(res.status).toBe(400);
    } finally {
      await sandbox.close();
    }
  });
});

describe('held requests are bounded and end', () => {
  it('past the per-account limit a 429 with Retry-After; a client that leaves frees its place', async () => {
    const held = [heldRequest('?after=now&wait=20'), heldRequest('?after=now&wait=20'), heldRequest('?after=now&wait=20')];
    await settle();
    const refused = await events('?after=now&wait=20');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.message).toContain('at once');
    // Another account is not limited by this one's.
    const other = await events('?after=now&wait=1', alice);
    expect(other.status).toBe(200);
    held[0]!.leave();
    let accepted: number | undefined;
    for (let i = 0; i < 50 && accepted !== 200; i++) accepted = (await events('?after=now&wait=1')).status;
    expect(accepted).toBe(200);
    held.forEach((request) => request.leave());
    await Promise.all(held.map((request) => request.ended));
  });

  it('closing the instance answers a held request at once with its page as it stands', async () => {
    const own = await createTestApp({ storage });
    const key = bearer(await own.key(['admin']));
    const held = own.http.get('/v2/events?after=now&wait=25', { headers: key });
    await settle();
    await own.close();
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([]);
    expect(res.body.nextAfter).toMatch(/^pos_/);
  }, 10_000);
});

describe('two instances on one database', () => {
  it('an event written through one instance answers a request held on the other', async () => {
    const other = await createTestApp({ storage });
    try {
      await settled();
      const held = other.http.get('/v2/events?after=now&wait=20&type=cheese.new_arrival', { headers: bearer(await other.key(['admin'])) });
      await settle();
      const created = await newCheese();
      const res = await held;
      expect(res.body.items.map((e: { data: { cheese_id: string } }) => e.data.cheese_id)).toEqual([String(created)]);
    } finally {
      await other.close();
    }
  });
});
