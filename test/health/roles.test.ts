import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { Receiver } from '../helpers/receiver.js';
import { startServer } from '../helpers/server.js';

/**
 * Issue 20, `ROLE=api|worker|all`: an api instance serves HTTP and runs no job and no webhook
 * dispatcher, so its orders wait in `placed` and their events stay in the outbox; a worker on
 * the same database (serving no API) captures the payment and delivers the events.
 */
let storage: TestStorage;
let env: NodeJS.ProcessEnv;
let receiver: Receiver;
beforeAll(async () => {
  storage = await createTestStorage();
  // Payment captured 0.2 s after placement: well inside the time an api instance is watched doing nothing.
  env = processEnvFor(storage, { RATE_LIMITS: 'off', PAYMENT_CAPTURE_DELAY_S: '0.2', WEBHOOK_POLL_MS: '100' });
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await receiver.close();
  await storage.dispose();
});

async function running(role: string, until: string): Promise<{ base: string; stop(): Promise<number | null> }> {
  const port = await freePort();
  const child: ChildProcess = await startServer({ ...env, ROLE: role }, port, until);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    base: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

async function json(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const response = await fetch(`${base}${path}`, { method: init.method ?? 'GET', headers: { 'content-type': 'application/json', ...init.headers }, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const eventsOf = (orderId: unknown) => receiver.at('/hook').map((r) => JSON.parse(r.raw) as { type: string; data: { order_id?: string } }).filter((e) => e.data.order_id === String(orderId)).map((e) => e.type);

describe(`ROLE=api and ROLE=worker (${DIALECT})`, () => {
  it('an api instance moves no order and sends no webhook; a worker on the same database does both', async () => {
    const api = await running('api', 'Interactive docs');
    let orderId: unknown;
    try {
      const login = await json(api.base, '/v2/customer/login', { method: 'POST', body: { username: 'test.customer', password: 'Gruyere and crackers 2026' } });
      expect(login.status).toBe(200);
      const key = await json(api.base, '/v2/api-keys', { method: 'POST', headers: { authorization: `Bearer ${login.body.token as string}` }, body: { scopes: ['read:orders', 'write:orders'] } });
      expect(key.status).toBe(201);
      const auth = { 'x-api-key': key.body.key as string };
      const hook = await json(api.base, '/v2/webhooks', { method: 'POST', headers: auth, body: { url: receiver.url('/hook'), events: ['order.*'] } });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const placed = await json(api.base, '/v2/orders', { method: 'POST', headers: auth, body: { items: [{ cheeseId: 1, quantity_kg: 0.1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } } });
      expect(placed.status, JSON.stringify(placed.body)).toBe(201);
      orderId = placed.body.id;
      // Ten capture delays and ten polls later: still placed, nothing sent.
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await json(api.base, `/v2/orders/${String(orderId)}`, { headers: auth })).body.status).toBe('placed');
      expect(receiver.at('/hook')).toEqual([]);
    } finally {
      expect(await api.stop()).toBe(0);
    }

    // One process at a time on SQLite's file; on PostgreSQL the same order of events holds.
    const worker = await running('worker', 'Probes:');
    try {
      const deadline = Date.now() + 20_000;
      while (!eventsOf(orderId).includes('order.confirmed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(eventsOf(orderId)).toEqual(expect.arrayContaining(['order.placed', 'order.confirmed']));
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  }, 120_000);
});
