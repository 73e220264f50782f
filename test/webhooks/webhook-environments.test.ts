import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestStorage, type TestStorage } from '../helpers/database.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * Issue 28: a development and a sandbox deployment on one store. Whatever the sandbox one is
 * asked (its fan-out, its lists of deliveries and dead letters, a replay, a replay of dead
 * letters), it never reaches a development event: nothing of the other environment is sent.
 */
let storage: TestStorage;
let receiver: Receiver;
let development: TestApp;
let sandbox: TestApp;

beforeAll(async () => {
  storage = await createTestStorage();
  receiver = await new Receiver().start();
  development = await createTestApp({ storage, env: 'development' });
  sandbox = await createTestApp({ storage, env: 'sandbox', workers: true });
});
afterAll(async () => {
  await sandbox.close();
  await development.close();
  await receiver.close();
  await storage.dispose();
});

const idsReceived = (path: string) => receiver.at(path).map((r) => String(r.headers['webhook-id']));

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} never happened`);
}

describe('a sandbox deployment on a store a development one uses', () => {
  it('fans out, lists and replays only sandbox events', async () => {
    const sandboxStaff = bearer(await sandbox.key(['admin']));
    const developmentStaff = bearer(await development.key(['admin']));
    // Test events fail (one attempt each: dead-lettered at once), catalogue events are delivered.
    receiver.on('/env', (_n, request) => ({ status: JSON.parse(request.raw).type === 'webhook.test' ? 500 : 200 }));
    const hook = await sandbox.http.post('/v2/webhooks', { headers: sandboxStaff, json: { url: receiver.url('/env'), events: ['cheese.new_arrival'] } });
    expect(hook.status).toBe(201);
    const id = hook.body.id as number;

    const developmentTest = await development.http.post(`/v2/webhooks/${id}/test`, { headers: developmentStaff });
    expect(developmentTest.body).toMatchObject({ outcome: 'dead_lettered' });
    const sandboxTest = await sandbox.http.post(`/v2/webhooks/${id}/test`, { headers: sandboxStaff });
    expect(sandboxTest.body).toMatchObject({ outcome: 'dead_lettered' });

    const cheese = (app: TestApp, headers: Record<string, string>, name: string) => app.http.post('/v2/cheeses', { headers, json: { name, pricePerKg: 10, stockQuantityKg: 50 } });
    const developmentCheese = await cheese(development, developmentStaff, `Development Brie ${Date.now()}`);
    expect(developmentCheese.status).toBe(201);
    const sandboxCheese = await cheese(sandbox, sandboxStaff, `Sandbox Brie ${Date.now()}`);
    expect(sandboxCheese.status).toBe(201);
    await receiver.waitFor('/env', 3);
    const eventOf = async (app: TestApp, headers: Record<string, string>, cheeseId: number) =>
      (await until('the event listed', () => app.http.get(`/v2/events?type=cheese.new_arrival&object_type=cheese&object_id=${cheeseId}`, { headers }), (res) => res.body.items?.length === 1)).body.items[0].id as string;
    const developmentEvent = await eventOf(development, developmentStaff, developmentCheese.body.id);
    const sandboxEvent = await eventOf(sandbox, sandboxStaff, sandboxCheese.body.id);

    // The fan-out: the sandbox's passed its own event, recorded after the development one, and never took that one.
    await until('the sandbox event delivered', () => sandbox.database.db.selectFrom('webhook_deliveries').select('state').where('event_id', '=', sandboxEvent).executeTakeFirst(), (row) => row?.state === 'delivered');
    expect(await sandbox.database.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', developmentEvent).execute()).toEqual([]);
    expect(idsReceived('/env')).not.toContain(developmentEvent);

    // The lists: the attempt log and the dead letters hold the sandbox's only; a development attempt is not found.
    const log = await sandbox.http.get(`/v2/webhooks/${id}/deliveries?limit=100`, { headers: sandboxStaff });
    expect(log.status).toBe(200);
    expect(new Set(log.body.items.map((a: { eventId: string }) => a.eventId))).toEqual(new Set([sandboxTest.body.eventId, sandboxEvent]));
    const dead = await sandbox.http.get(`/v2/webhooks/dead-letters?webhookId=${id}`, { headers: sandboxStaff });
    expect(dead.body.items.map((d: { eventId: string }) => d.eventId)).toEqual([sandboxTest.body.eventId]);
    const developmentLog = await development.http.get(`/v2/webhooks/${id}/deliveries?limit=100`, { headers: developmentStaff });
    expect(developmentLog.body.items.map((a: { eventId: string }) => a.eventId)).toEqual([developmentTest.body.eventId]);
    const developmentAttempt = developmentLog.body.items[0].id as number;
    expect((await sandbox.http.get(`/v2/webhooks/${id}/deliveries/${developmentAttempt}`, { headers: sandboxStaff })).status).toBe(404);

    // A replay of every event since the year 1: the sandbox's two, not the development test event.
    const replay = await sandbox.http.post(`/v2/webhooks/${id}/replay?from=0001-01-01T00:00:00Z`, { headers: sandboxStaff });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ requeued: 2 });
    await until('the replay sent', async () => idsReceived('/env'), (ids) => ids.filter((x) => x === sandboxEvent).length === 2 && ids.filter((x) => x === sandboxTest.body.eventId).length === 2);
    await until('the replay settled', () => sandbox.database.db.selectFrom('webhook_deliveries').select('state').where('webhook_id', '=', id).where('state', '=', 'pending').execute(), (rows) => rows.length === 0);

    // Dead letters replayed, per webhook (no selection) and across webhooks: the sandbox's one each time.
    expect((await sandbox.http.post(`/v2/webhooks/${id}/replay`, { headers: sandboxStaff })).body).toEqual({ requeued: 1 });
    await until('the dead letter sent', async () => idsReceived('/env'), (ids) => ids.filter((x) => x === sandboxTest.body.eventId).length === 3);
    await until('the replay settled', () => sandbox.database.db.selectFrom('webhook_deliveries').select('state').where('webhook_id', '=', id).where('state', '=', 'pending').execute(), (rows) => rows.length === 0);
    expect((await sandbox.http.post('/v2/webhooks/dead-letters/replay', { headers: sandboxStaff })).body).toEqual({ requeued: 1 });
    await until('the dead letter sent', async () => idsReceived('/env'), (ids) => ids.filter((x) => x === sandboxTest.body.eventId).length === 4);

    // The development test event went once, when it was tested; the development cheese never.
    expect(idsReceived('/env').filter((x) => x === developmentTest.body.eventId)).toHaveLength(1);
    expect(idsReceived('/env')).not.toContain(developmentEvent);
    const developmentDead = await development.database.db.selectFrom('webhook_deliveries').select(['state', 'attempts']).where('event_id', '=', developmentTest.body.eventId).executeTakeFirstOrThrow();
    expect(developmentDead).toEqual({ state: 'dead', attempts: 1 });
  }, 60_000);
});
