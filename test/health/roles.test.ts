import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { Receiver } from '../helpers/receiver.js';
import { runServer, sandboxCustomerKey } from '../helpers/server.js';

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

const eventsOf = (orderId: unknown) => receiver.at('/hook').map((r) => JSON.parse(r.raw) as { type: string; data: { order_id?: string } }).filter((e) => e.data.order_id === String(orderId)).map((e) => e.type);

describe(`ROLE=api and ROLE=worker (${DIALECT})`, () => {
  it('an api instance moves no order and sends no webhook; a worker on the same database does both', async () => {
    const api = await runServer({ ...env, ROLE: 'api' });
    let orderId: unknown;
    try {
      const auth = await sandboxCustomerKey(api.http, ['read:orders', 'write:orders']);
      const hook = await api.http.post('/v2/webhooks', { headers: auth, json: { url: receiver.url('/hook'), events: ['order.*'] } });
      expect(hook.status, hook.text).toBe(201);
      const placed = await api.http.post('/v2/orders', { headers: auth, json: { items: [{ cheeseId: 1, quantity_kg: 0.1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } } });
      expect(placed.status, placed.text).toBe(201);
      orderId = placed.body.id;
      // Ten capture delays and ten polls later: still placed, nothing sent.
      // outside process: nothing may happen in the ROLE=api child process for a while: an absence has no condition to poll.
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await api.http.get(`/v2/orders/${String(orderId)}`, { headers: auth })).body.status).toBe('placed');
      expect(receiver.at('/hook')).toEqual([]);
    } finally {
      expect(await api.stop()).toBe(0);
    }

    // One process at a time on SQLite's file; on PostgreSQL the same order of events holds.
    const worker = await runServer({ ...env, ROLE: 'worker' }, 'Probes:');
    try {
      const deadline = Date.now() + 20_000;
      while (!eventsOf(orderId).includes('order.confirmed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(eventsOf(orderId)).toEqual(expect.arrayContaining(['order.placed', 'order.confirmed']));
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  }, 120_000);
});
