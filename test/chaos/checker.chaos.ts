import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { checkFailures, checkLifecycles, checkObservedLifecycles, checkOrders, checkStock } from './checker.js';
import type { Exchange } from './client.js';
import { checkSharedLimits, METERED_OP } from './limit-check.js';
import type { FinalRead } from './final-read.js';
import type { Load } from './load.js';
import { WebhookSink } from './webhook-sink.js';
import type { World } from './world.js';

/**
 * The checker catches what it is there to catch: each check, given a record or a database with
 * one violation planted, reports it (and is quiet on the clean case). The databases are
 * in-memory SQLite with just the columns the checks read.
 */
const exchange = (over: Partial<Exchange>): Exchange => ({ op: 'read', method: 'GET', path: '/v2/cheeses', t0: 0, t1: 10, status: 200, ...over });

function memoryRead(setup: string): FinalRead {
  const db = new SQLite(':memory:');
  db.exec(`
    create table cheeses (id integer primary key, name text, stock_grams integer);
    create table accounts (id integer primary key, username text);
    create table orders (id integer primary key, account_id integer, status text, notes text);
    create table order_items (id integer primary key, order_id integer, cheese_id integer, grams integer);
    create table order_status_changes (id integer primary key, order_id integer, status text);
    ${setup}`);
  return { rows: (sql) => Promise.resolve(db.prepare(sql).all() as Record<string, unknown>[]), close: () => Promise.resolve(void db.close()) };
}

const world = { scarce: { id: 1, grams: 1000 }, plenty: [] } as unknown as World;
const loadOf = (orders: Load['orders']) => ({ orders, renames: [], record: [] }) as unknown as Load;

describe('the chaos checker', () => {
  it('flags failures outside fault windows (+5 s) and Idempotency-Keys held there, not inside', () => {
    const windows = [{ name: 'kill', start: 1_000, end: 2_000 }];
    expect(checkFailures([exchange({ status: 502, t0: 6_000, t1: 6_500 }), exchange({ status: 0, error: 'ECONNRESET', t0: 1_500, t1: 1_600 })], windows, 0)).toEqual([]);
    expect(checkFailures([exchange({ status: 502, t0: 7_100, t1: 7_200 })], windows, 0)).toHaveLength(1);
    expect(checkFailures([exchange({ status: 0, error: 'ECONNRESET', t0: 9_000, t1: 9_001 })], [], 0)).toHaveLength(1);
    expect(checkFailures([exchange({ status: 409, body: { message: 'A request with this Idempotency-Key is still being processed: retry in a moment.' }, t0: 9_000, t1: 9_001 })], windows, 0)).toHaveLength(1);
  });

  it('flags an order seen going backwards, not one seen moving on or read concurrently', () => {
    const read = (status: string, t0: number, t1: number) => exchange({ op: 'read-order', path: '/v2/orders/7', body: { id: 7, status }, t0, t1 });
    expect(checkObservedLifecycles([read('placed', 0, 10), read('shipped', 20, 30), exchange({ op: 'cancel', method: 'DELETE', path: '/v2/store/order/8', status: 204, t0: 0, t1: 5 })])).toEqual([]);
    expect(checkObservedLifecycles([read('shipped', 0, 50), read('approved', 10, 60)])).toEqual([]);
    expect(checkObservedLifecycles([read('shipped', 0, 10), read('approved', 20, 30)])).toHaveLength(1);
  });

  it('flags oversell and stock that does not add up', async () => {
    const clean = memoryRead(`insert into cheeses values (1, 'Scarce', 400); insert into orders values (1, null, 'placed', 'chaos-1'), (2, null, 'cancelled', 'chaos-2');
      insert into order_items values (1, 1, 1, 600), (2, 2, 1, 500);`);
    expect(await checkStock(clean, world)).toEqual([]);
    const oversold = memoryRead(`insert into cheeses values (1, 'Scarce', -200); insert into orders values (1, null, 'placed', 'chaos-1'); insert into order_items values (1, 1, 1, 1200);`);
    expect((await checkStock(oversold, world)).join('\n')).toMatch(/oversell: cheese 1 has -200 g[\s\S]*oversell: orders hold 1200 g/);
  });

  it('flags a lost acknowledged order, two orders under one key, and a history that skips a step', async () => {
    const intent = (key: string, acknowledged?: number) => ({ key, customer: 'chaos.buyer.1', lines: [{ cheeseId: 1, grams: 500 }], acknowledged, lastStatus: acknowledged ? 201 : 0 });
    const read = memoryRead(`insert into accounts values (5, 'chaos.buyer.1');
      insert into orders values (1, 5, 'shipped', 'chaos-a'), (2, 5, 'placed', 'chaos-b'), (3, 5, 'placed', 'chaos-b');
      insert into order_items values (1, 1, 1, 500), (2, 2, 1, 500), (3, 3, 1, 500);
      insert into order_status_changes values (1, 1, 'placed'), (2, 1, 'shipped'), (3, 2, 'placed'), (4, 3, 'placed');`);
    const problems = await checkOrders(read, loadOf([intent('chaos-a', 1), intent('chaos-b'), intent('chaos-c', 9)]));
    expect(problems.join('\n')).toMatch(/more than one order for an Idempotency-Key: \[\["chaos-b",\[2,3\]\]\]/);
    expect(problems.join('\n')).toMatch(/acknowledged orders missing from the database: \["chaos-c → order 9"\]/);
    expect((await checkLifecycles(read)).join('\n')).toMatch(/order 1: placed → shipped/);
  });

  it('sees two attempts of one event in flight at once at the receiver', () => {
    const sink = new WebhookSink();
    sink.requests.push({ eventId: 'evt_1', attempt: 1, arrivedAt: 0, answeredAt: 100, status: 200 }, { eventId: 'evt_1', attempt: 2, arrivedAt: 50, answeredAt: 150, status: 200 });
    sink.requests.push({ eventId: 'evt_2', attempt: 1, arrivedAt: 0, answeredAt: 100, status: 200 }, { eventId: 'evt_2', attempt: 2, arrivedAt: 200, answeredAt: 300, status: 200 });
    expect(sink.overlaps().map((o) => o.eventId)).toEqual(['evt_1']);
  });
  it('flags instances that each keep their own rate-limit budget, not one budget shared, nor a time Redis was away', () => {
    // 8 requests a second for 30 s through a round robin of three instances; the plan refills 2.78 a second from 1,000.
    const policy = '"free";q=10000;w=3600, "per-minute";q=100000;w=60';
    const metered = (buckets: number): Exchange[] => {
      const tokens = Array<number>(buckets).fill(1000);
      const refilledAt = Array<number>(buckets).fill(0);
      return Array.from({ length: 240 }, (_, i) => {
        const t0 = i * 125;
        const b = i % buckets;
        tokens[b] = Math.min(1000, tokens[b]! + ((t0 - refilledAt[b]!) / 1000) * (10000 / 3600)) - 1;
        refilledAt[b] = t0;
        return exchange({ op: METERED_OP, t0, t1: t0 + 5, server: `app${(i % 3) + 1}`, rateLimit: `"free";r=${Math.floor(tokens[b]!)};t=10`, rateLimitPolicy: policy });
      });
    };
    expect(checkSharedLimits(metered(1), [], 0)).toEqual([]);
    expect(checkSharedLimits(metered(3), [], 0).join()).toMatch(/rate limits did not hold across instances while Redis was up: between/);
    // Three budgets only while Redis was away (from 10 s to 20 s): those answers are left out.
    const mixed = metered(1).map((e, i) => (e.t0 >= 10_000 && e.t0 < 20_000 ? { ...e, rateLimit: `"free";r=${999 - (i % 3)};t=1` } : e));
    expect(checkSharedLimits(mixed, [{ name: 'redis', start: 10_000, end: 14_000 }], 0)).toEqual([]);
    expect(checkSharedLimits(mixed, [], 0)).toHaveLength(1);
    expect(checkSharedLimits(metered(1).slice(0, 5), [], 0).join()).toMatch(/too few metered answers/);
  });
});
