import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_CONTEXT } from '../../src/kernel/change-context.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECT } from '../helpers/database.js';
import { bearer } from '../helpers/http.js';

/**
 * No lost events while polling (issue 21). PostgreSQL takes ids (and txids) before commit: a
 * transaction holding an event open while a later one commits must keep the later one out of
 * the log until it ends, then both are served in (txid, id) order, nothing skipped. The
 * webhook fan-out reads the same prefix. SQLite has one writer, so there is no such gap.
 */
let t: TestApp;
let staff: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  staff = bearer(await t.key(['admin']));
});
afterAll(() => t.close());

const cheese = async (name: string) => {
  const res = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `${name} ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 50 } });
  expect(res.status).toBe(201);
  return res.body as { id: number };
};
const after = (id: string) => t.http.get(`/v2/events?order=asc&after=${id}&limit=100`, { headers: staff });

/** The id of a cheese's event once the log lists it (a few milliseconds after its commit on PostgreSQL). */
async function listedId(cheeseId: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const page = await t.http.get(`/v2/events?object_type=cheese&object_id=${cheeseId}`, { headers: staff });
    if (page.body.items.length > 0) return page.body.items[0].id as string;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`cheese ${cheeseId}'s event never listed`);
}

/** Polls until the log past `id` holds `count` events (other transactions on a shared server may hold the horizon back a moment). */
async function pollUntil(id: string, count: number): Promise<Array<{ id: string; data: Record<string, string> }>> {
  for (let i = 0; i < 200; i++) {
    const page = await after(id);
    if (page.body.items.length >= count) return page.body.items;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the log never held ${count} events past ${id}`);
}

describe.skipIf(DIALECT !== 'postgres')('a transaction still open', () => {
  it('holds back events committed after it began writing, then both are served in commit-safe order', async () => {
    const previous = await listedId((await cheese('Before the gap')).id);
    expect((await after(previous)).body.items).toEqual([]);
    const { dispatcher } = t.app.modules.webhooks.provides;
    while ((await dispatcher.fanOut()) > 0);

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const inserted = new Promise<void>((resolve) => (written = resolve));
    const outbox = t.app.modules.outbox.provides.outbox;
    // The earlier event: its transaction takes its txid and id now, and commits only at the end.
    const held = t.database.db.transaction().execute(async (trx) => {
      const event = await outbox.recordOne(trx, { type: 'cheese.new_arrival', audience: 'public', aggregateType: 'cheese', aggregateId: '999999', data: { cheese_id: '999999', slug: 'held', name: 'Held', status: 'available', in_stock: true, stock_quantity_kg: 1, price_per_kg: 1 } }, SYSTEM_CONTEXT);
      written();
      await gate;
      return event.eventId;
    });
    await inserted;
    try {
      const later = await cheese('After the gap');
      // Committed and readable by id, but not yet in the log: a poller past it would skip the held one.
      expect((await after(previous)).body.items).toEqual([]);
      const fannedOut = await dispatcher.fanOut();
      expect(fannedOut).toBe(0);
      const laterEvent = (await t.http.get(`/v2/events?type=cheese.new_arrival&object_type=cheese&object_id=${later.id}`, { headers: staff })).body.items;
      expect(laterEvent).toEqual([]);
    } finally {
      release();
    }
    const heldId = await held;
    const items = await pollUntil(previous, 2);
    expect(items.map((e) => e.id)[0]).toBe(heldId);
    expect(items[1]!.data.name).toMatch(/^After the gap/);
    expect(items).toHaveLength(2);
    // The fan-out passes both now, once.
    expect(await dispatcher.fanOut()).toBe(2);
    expect(await dispatcher.fanOut()).toBe(0);
  });
});

describe('polling forward', () => {
  it('sees every event once, in order, however the polls fall between commits', async () => {
    let position = await listedId((await cheese('Start')).id);
    const made: string[] = [];
    const seen: string[] = [];
    const writes = (async () => {
      for (let i = 0; i < 12; i++) made.push(String((await cheese(`Polled ${i}`)).id));
    })();
    let done = false;
    void writes.then(() => (done = true));
    while (!done || seen.length < made.length) {
      const page = await after(position);
      for (const event of page.body.items) seen.push(event.data.cheese_id);
      if (page.body.items.length > 0) position = page.body.items.at(-1).id;
      else await new Promise((r) => setTimeout(r, 20));
    }
    await writes;
    expect(seen).toEqual(made);
  });
});
