import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEventId } from '../../src/modules/outbox/outbox.writer.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * The event log beside webhook delivery (issue 21): the log's event is the delivery's body
 * byte for byte, `pending_webhooks` and `delivery_success=false` follow the deliveries, a
 * client that finds an undelivered event replays it by id, and the prune keeps what a
 * consumer or a delivery still needs.
 */
let t: TestApp;
let receiver: Receiver;
let staff: Record<string, string>;
let failing = true;

beforeAll(async () => {
  receiver = await new Receiver().start();
  receiver.on('/hook', () => ({ status: failing ? 500 : 200 }));
  t = await createTestApp({ workers: true });
  staff = bearer(await t.key(['admin']));
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition never held');
}

/**
 * The cheese's event once the list holds it. On PostgreSQL the log lists an event once no
 * transaction that began writing before it is still open anywhere on the server (other test
 * files' included): a few milliseconds after its commit, not at once.
 */
async function listedEvent(cheeseId: number): Promise<{ id: string }> {
  const res = await until(() => t.http.get(`/v2/events?object_type=cheese&object_id=${cheeseId}`, { headers: staff }), (r) => r.status === 200 && r.body.items.length > 0);
  return res.body.items[0];
}

describe('an undelivered event', () => {
  it('is listed by delivery_success=false with pending_webhooks, replayed by id from the log, then delivered', async () => {
    const hook = await t.http.post('/v2/webhooks', { headers: staff, json: { url: receiver.url('/hook'), events: ['cheese.new_arrival'], maxAttempts: 5 } });
    expect(hook.status).toBe(201);
    const created = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Undelivered ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 5 } });
    expect(created.status).toBe(201);
    const event = await listedEvent(created.body.id);

    // Every attempt fails until the schedule ends: dead-lettered, so still pending for the log.
    await until(() => t.http.get(`/v2/webhooks/dead-letters?webhookId=${hook.body.id}`, { headers: staff }), (res) => res.status === 200 && res.body.items.length === 1);
    const undelivered = await t.http.get('/v2/events?delivery_success=false', { headers: staff });
    expect(undelivered.status).toBe(200);
    expect(undelivered.body.items.map((e: { id: string }) => e.id)).toEqual([event.id]);
    expect(undelivered.body.items[0].pending_webhooks).toBe(1);
    // A customer's count covers its own webhooks only.
    const customer = bearer(await t.key(['read:cheeses'], 'customer'));
    expect((await t.http.get(`/v2/events/${event.id}`, { headers: customer })).body.pending_webhooks).toBe(0);

    failing = false;
    const replay = await t.http.post(`/v2/webhooks/${hook.body.id}/replay?eventIds=${event.id}`, { headers: staff });
    expect(replay.body).toEqual({ requeued: 1 });
    const delivered = await until(() => t.http.get(`/v2/events/${event.id}`, { headers: staff }), (res) => res.body.pending_webhooks === 0);
    expect((await t.http.get('/v2/events?delivery_success=false', { headers: staff })).body.items).toEqual([]);

    // The delivery's body is the log's event, byte for byte, without pending_webhooks.
    const body = receiver.at('/hook').at(-1)!.raw;
    expect(delivered.text).toBe(`${body.slice(0, -1)},"pending_webhooks":0}`);
  });
});

describe('retention', () => {
  it('prunes events past EVENT_RETENTION_DAYS that the fan-out passed and no delivery holds, and never others', async () => {
    const created = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Pruned ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 5 } });
    const event = await listedEvent(created.body.id);
    const later = new Date(Date.now() + 31 * 86_400_000);
    // The dead-lettered delivery of the first test still points at its event: kept, and so is every later one.
    await t.runJob('outbox.prune', later);
    expect((await t.http.get(`/v2/events/${event.id}`, { headers: staff })).status).toBe(200);
    // Once its delivery is delivered and gone (WEBHOOK_RETENTION_DAYS), the event goes.
    await until(async () => receiver.at('/hook').some((r) => r.headers['webhook-id'] === event.id), (sent) => sent);
    await until(() => t.http.get(`/v2/events/${event.id}`, { headers: staff }), (res) => res.body.pending_webhooks === 0);
    await t.runJob('webhooks.prune', later);
    expect(await t.runJob('outbox.prune', later)).toBeGreaterThan(0);
    expect((await t.http.get(`/v2/events/${event.id}`, { headers: staff })).status).toBe(404);
  });

  it('answers 410 for an event pruned past the retention, told by the time in its id', async () => {
    // As if recorded 31 days ago (the writer stamps the present): the id and created_at carry that time.
    const at = Date.now() - 31 * 86_400_000;
    const eventId = newEventId(at);
    await t.database.db
      .insertInto('outbox')
      // A kind no webhook here subscribes to, so no delivery holds it.
      .values({ event_id: eventId, type: 'api_key.expiring', aggregate_type: 'api_key', aggregate_id: '1', data: '{}', metadata: '{}', audience: 'staff', environment: 'development', created_at: new Date(at).toISOString() })
      .execute();
    await until(() => t.http.get(`/v2/events/${eventId}`, { headers: staff }), (res) => res.status === 200);
    // Pruned once the fan-out has passed it: on PostgreSQL, once no transaction anywhere on the
    // server that began writing before it is still open (the fan-out reads the settled prefix).
    await until(async () => {
      await t.app.modules.webhooks.provides.dispatcher.fanOut();
      return t.runJob('outbox.prune');
    }, (pruned) => pruned > 0);
    const gone = await t.http.get(`/v2/events/${eventId}`, { headers: staff });
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ code: 410, type: 'not_found' });
  });

  it('keeps events the fan-out has not passed', async () => {
    await t.app.modules.webhooks.provides.dispatcher.stop();
    const created = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Unpassed ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 5 } });
    const listed = await until(() => t.http.get(`/v2/events?object_type=cheese&object_id=${created.body.id}`, { headers: staff }), (res) => res.body.items.length === 1);
    const event = listed.body.items[0];
    expect(await t.runJob('outbox.prune', new Date(Date.now() + 31 * 86_400_000))).toBe(0);
    expect((await t.http.get(`/v2/events/${event.id}`, { headers: staff })).status).toBe(200);
  });
});
