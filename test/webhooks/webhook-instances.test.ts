import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestStorage, DIALECT, type TestStorage } from '../helpers/database.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * Several instances over one database: their dispatchers share the work without ever sending
 * one attempt twice, and a commit on one wakes the dispatcher of another (PostgreSQL's
 * LISTEN/NOTIFY), with the poll set to a minute so only the wake can explain a delivery.
 */
let storage: TestStorage;
let receiver: Receiver;
const apps: TestApp[] = [];

beforeAll(async () => {
  storage = await createTestStorage();
  receiver = await new Receiver().start();
});
afterAll(async () => {
  for (const app of apps.reverse()) await app.close();
  await receiver.close();
  await storage.dispose();
});

async function instance(workers: boolean, pollMs = 200): Promise<TestApp> {
  const app = await createTestApp({ storage, workers, config: { webhooks: { retryScheduleS: [0, 0.1, 0.2], timeoutMs: 2000, retentionDays: 30, concurrency: 16, endpointConcurrency: 4, accountConcurrency: 4, pollMs } } });
  apps.push(app);
  return app;
}

const createCheese = async (app: TestApp, headers: Record<string, string>, name: string) => {
  const res = await app.http.post('/v2/cheeses', { headers, json: { name, pricePerKg: 12, stockQuantityKg: 5 } });
  expect(res.status).toBe(201);
};

describe('two instances dispatching from one database', () => {
  it('send each attempt of each event once, retries included', async () => {
    const [a, b] = [await instance(true), await instance(true)];
    const staff = bearer(await a.key(['admin']));
    // Every event's first attempt fails, so each event crosses the dispatchers twice.
    const seen = new Set<string>();
    receiver.on('/shared', (_n, request) => {
      const id = String(request.headers['webhook-id']);
      if (seen.has(id)) return { status: 200, delayMs: 5 };
      seen.add(id);
      return { status: 500, delayMs: 5 };
    });
    const hook = await a.http.post('/v2/webhooks', { headers: staff, json: { url: receiver.url('/shared'), events: ['cheese.new_arrival'] } });
    expect(hook.status).toBe(201);

    const count = 60;
    await Promise.all(Array.from({ length: count }, (_, i) => createCheese(i % 2 ? a : b, staff, `Shared cheese ${i}`)));
    const received = await receiver.waitFor('/shared', 2 * count, 30_000);
    // Every delivery settled (none can be claimed again) and every attempt answered and logged:
    // a second send of an attempt comes only from a second claim of a row still pending, sent
    // beside the first, so it has arrived by the time both are logged.
    const settled = async () => {
      const rows = await a.database.db.selectFrom('webhook_deliveries').select('state').where('webhook_id', '=', hook.body.id).execute();
      const logged = await a.database.db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll<number>().as('n')).where('webhook_id', '=', hook.body.id).executeTakeFirstOrThrow();
      return rows.length === count && rows.every((row) => row.state === 'delivered') && Number(logged.n) >= 2 * count;
    };
    await expect.poll(settled, { timeout: 10_000, interval: 50 }).toBe(true);

    const attempts = receiver.at('/shared').map((r) => `${String(r.headers['webhook-id'])} #${String(r.headers['x-cheese-delivery-attempt'])}`);
    expect(received.length).toBe(2 * count);
    expect(new Set(attempts).size).toBe(attempts.length);
    expect(new Set(receiver.at('/shared').map((r) => String(r.headers['webhook-id']))).size).toBe(count);
    const log = await a.database.db.selectFrom('webhook_attempts').select(['outcome']).where('webhook_id', '=', hook.body.id).execute();
    expect(log.filter((row) => row.outcome === 'failed').length).toBe(count);
    expect(log.filter((row) => row.outcome === 'delivered').length).toBe(count);
    for (const app of apps.splice(0)) await app.close();
  }, 60_000);

  it('wakes on a commit without waiting for the poll', async () => {
    const app = await instance(true, 60_000);
    const staff = bearer(await app.key(['admin']));
    const hook = await app.http.post('/v2/webhooks', { headers: staff, json: { url: receiver.url('/woken'), events: ['cheese.new_arrival'] } });
    expect(hook.status).toBe(201);
    await createCheese(app, staff, 'Woken cheese');
    await receiver.waitFor('/woken', 1, 10_000);
    for (const app of apps.splice(0)) await app.close();
  }, 30_000);

  it.runIf(DIALECT === 'postgres')('wakes on another instance\'s commit (LISTEN/NOTIFY)', async () => {
    const writer = await instance(false);
    await instance(true, 60_000);
    const staff = bearer(await writer.key(['admin']));
    const hook = await writer.http.post('/v2/webhooks', { headers: staff, json: { url: receiver.url('/elsewhere'), events: ['cheese.new_arrival'] } });
    expect(hook.status).toBe(201);
    await createCheese(writer, staff, 'Cheese from elsewhere');
    await receiver.waitFor('/elsewhere', 1, 10_000);
  }, 30_000);
});
