import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { startServer } from '../helpers/server.js';

/**
 * The server is killed (SIGKILL) while orders are being placed and the lifecycle runs, then
 * started again: every accepted order is there, and every step of every order happened
 * exactly once, with exactly one event each.
 */
const run = promisify(execFile);
let storage: TestStorage;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;

const start = (port: number) => startServer(env, port);

beforeAll(async () => {
  storage = await createTestStorage();
  // Every step due 50 ms after the previous one: the lifecycle runs while orders arrive.
  env = processEnvFor(storage, { ADMIN_PASSWORD: 'crash test staff password', PAYMENT_CAPTURE_DELAY_S: '0.05', SHIP_DELAY_S: '0.05', DELIVER_DELAY_S: '0.05', RATE_LIMITS: 'off', MAX_CONNECTIONS_PER_CLIENT: '0' });
});
afterAll(async () => {
  server?.kill('SIGKILL');
  await storage.dispose();
});

describe('a crash while orders are placed and moved on', () => {
  it('loses no accepted order and repeats no step', async () => {
    const port = await freePort();
    server = await start(port);
    const base = `http://127.0.0.1:${port}/v2`;
    const key = (await run(process.execPath, ['bin/fromagerie.js', 'api-keys', 'create', '--user', 'admin', '--scopes', 'admin', '--quiet'], { env })).stdout.trim();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const cheese = (await (await fetch(`${base}/cheeses`, { method: 'POST', headers, body: JSON.stringify({ name: 'Crash-proof Cantal', pricePerKg: 20, stockQuantityKg: 1000 }) })).json()) as { id: number };

    const accepted: number[] = [];
    let placing = true;
    const placeLoop = async () => {
      while (placing) {
        try {
          const res = await fetch(`${base}/orders`, { method: 'POST', headers, body: JSON.stringify({ items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Place', city: 'Aurillac', country: 'FR' } } }) });
          if (res.status === 201) accepted.push(((await res.json()) as { id: number }).id);
        } catch {
          // the server is gone: an order whose answer never came is not "accepted"
        }
      }
    };
    const loops = Array.from({ length: 8 }, placeLoop);
    while (accepted.length < 60) await new Promise((r) => setTimeout(r, 20));
    server.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    placing = false;
    await Promise.all(loops);

    // The crash caught the lifecycle midway: some orders were still on their way.
    const stopped = openDatabase({ ...loadConfig(env), poolSize: 1 });
    const unfinished = await stopped.db.selectFrom('orders').select('id').where('status', 'in', ['placed', 'approved', 'shipped']).where('id', 'in', accepted).execute();
    await stopped.close();
    expect(unfinished.length).toBeGreaterThan(0);

    server = await start(port);
    const database = openDatabase({ ...loadConfig(env), poolSize: 2 });
    const { db } = database;
    // This test's orders: the sandbox's fixtures (orders 1 to 10) stay where they are by design.
    const ours = () =>
      db.selectFrom('orders').select(['id', 'status']).where(({ exists, selectFrom }) => exists(selectFrom('order_items').select('order_items.id').whereRef('order_items.order_id', '=', 'orders.id').where('order_items.cheese_id', '=', cheese.id))).execute();
    try {
      const deadline = Date.now() + 60_000;
      while ((await ours()).some((o) => o.status !== 'delivered')) {
        if (Date.now() > deadline) throw new Error('orders were still open a minute after the restart');
        await new Promise((r) => setTimeout(r, 100));
      }
      server.kill('SIGTERM');
      const orders = await ours();
      const ids = new Set(orders.map((o) => Number(o.id)));
      expect(accepted.filter((id) => !ids.has(id))).toEqual([]);
      const steps = await db.selectFrom('order_status_changes').select(['order_id', 'status']).orderBy('id').execute();
      const events = await db.selectFrom('outbox').select(['aggregate_id', 'type', 'metadata']).where('aggregate_type', '=', 'order').orderBy('id').execute();
      for (const order of orders) {
        expect(steps.filter((s) => Number(s.order_id) === Number(order.id)).map((s) => s.status)).toEqual(['placed', 'approved', 'shipped', 'delivered']);
        const own = events.filter((e) => e.aggregate_id === String(order.id));
        expect(own.map((e) => [e.type, JSON.parse(e.metadata).sequence])).toEqual([['order.placed', 1], ['order.confirmed', 2], ['order.shipped', 3], ['order.delivered', 4]]);
      }
      const stock = await db.selectFrom('cheeses').select('stock_grams').where('id', '=', cheese.id).executeTakeFirstOrThrow();
      expect(Number(stock.stock_grams)).toBe(1_000_000 - orders.length * 1000);
    } finally {
      await database.close();
    }
  }, 180_000);
});
