import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { Receiver, type Received } from '../helpers/receiver.js';

let t: TestApp;
let staff: Record<string, string>;
let receiver: Receiver;
let seq = 0;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ workers: true }));
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const customer = async () => bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses', 'read:profile'], 'customer'));
const address = { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' };

async function cheese(): Promise<{ id: number; slug: string }> {
  const res = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Webhook cheese ${++seq}`, pricePerKg: 20, stockQuantityKg: 50, status: 'available' } });
  expect(res.status).toBe(201);
  return res.body;
}

async function order(headers: Record<string, string>, cheeseId: number): Promise<number> {
  const res = await t.http.post('/v2/orders', { headers, json: { items: [{ cheeseId: String(cheeseId), quantity_kg: 1 }], shipping: { method: 'standard', address } } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function register(headers: Record<string, string>, path: string, events: string[], extra: Record<string, unknown> = {}) {
  const res = await t.http.post('/v2/webhooks', { headers, json: { url: receiver.url(path), events, ...extra } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; secret: string; [k: string]: unknown };
}

/** Verifies a delivery both ways a receiver would: the standardwebhooks package, and a plain HMAC of the raw body. */
function verify(delivery: Received, secret: string) {
  const payload = new StandardWebhook(secret).verify(delivery.raw, delivery.headers as Record<string, string>) as Record<string, unknown>;
  const expected = `sha256=${createHmac('sha256', secret).update(delivery.raw).digest('hex')}`;
  expect(String(delivery.headers['x-cheese-signature']).split(',')).toContain(expected);
  return payload;
}

const attempts = async (id: number, headers: Record<string, string>, query = '') => (await t.http.get(`/v2/webhooks/${id}/deliveries${query}`, { headers })).body;

describe('registering', () => {
  it('201 with the secret shown once; GET and the list never show it; Location names it', async () => {
    const me = await customer();
    const created = await register(me, '/shown-once', ['order.*'], { description: 'Shop orders' });
    expect(created).toMatchObject({ events: ['order.*'], description: 'Shop orders', maxAttempts: 6, active: true, disabledReason: null, scopes: ['read:cheeses', 'read:orders', 'read:profile'] });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await t.http.get(`/v2/webhooks/${created.id}`, { headers: me });
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('secret');
    expect(got.text).not.toContain(created.secret.slice(6));
    const list = await t.http.get('/v2/webhooks', { headers: me });
    expect(list.body.items.map((w: { id: number }) => w.id)).toEqual([created.id]);
    const row = await t.database.db.selectFrom('webhooks').select(['secret_ciphertext']).where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).not.toContain(created.secret.slice(6, 20));
  });

  it('refuses what it cannot deliver: unknown kinds 422, kinds beyond the credential 403, bad URLs 422; nothing is created', async () => {
    const catalogueOnly = bearer(await t.key(['read:cheeses'], 'customer'));
    const before = await t.database.db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const post = (json: unknown) => t.http.post('/v2/webhooks', { headers: catalogueOnly, json });
    expect((await post({ url: receiver.url('/x'), events: ['order.teleported'] })).status).toBe(422);
    expect((await post({ url: receiver.url('/x'), events: ['parcel.*'] })).status).toBe(422);
    const forbidden = await post({ url: receiver.url('/x'), events: ['order.shipped'] });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.message).toContain('read:orders');
    for (const url of ['ftp://example.com/hook', 'not a url', 'http://user:pw@127.0.0.1/x', 'http://127.0.0.1/x#frag']) {
      const res = await post({ url, events: ['cheese.*'] });
      expect(res.status, url).toBe(422);
      expect(res.body.type).toBe('validation_failed');
    }
    expect((await post({ url: receiver.url('/x'), events: ['cheese.*'], maxAttempts: 4 })).status).toBe(422);
    const after = await t.database.db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    // A wildcard is fine: it delivers what the credential may receive.
    expect((await post({ url: receiver.url('/x'), events: ['*'] })).status).toBe(201);
  });

  it("another account's webhook is a 404 for every operation; staff see it", async () => {
    const owner = await customer();
    const other = await customer();
    const { id } = await register(owner, '/private', ['order.*']);
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', '/deliveries'], ['POST', '/test'], ['POST', '/replay'], ['POST', '/rotate-secret']] as const) {
      const res = await t.http.request(method, `/v2/webhooks/${id}${path}`, { headers: other, ...(method === 'PATCH' ? { json: { active: false } } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await t.http.get('/v2/webhooks', { headers: other })).body.items).toEqual([]);
    expect((await t.http.get(`/v2/webhooks/${id}`, { headers: staff })).status).toBe(200);
    expect((await t.http.get(`/v2/webhooks/${id}`, { headers: owner })).body.active).toBe(true);
  });
});

describe('delivery', () => {
  it('an order event reaches its owner signed both ways, with the envelope and headers of decisions §8; never another customer', async () => {
    const me = await customer();
    const someoneElse = await customer();
    const mine = await register(me, '/mine', ['order.*']);
    const theirs = await register(someoneElse, '/theirs', ['order.*']);
    const all = await register(staff, '/staff-orders', ['order.placed']);
    const c = await cheese();
    const orderId = await order(me, c.id);
    const [delivery] = await receiver.waitFor('/mine', 1);
    const payload = verify(delivery!, mine.secret);
    expect(payload).toMatchObject({ type: 'order.placed', data: { order_id: String(orderId), status: 'placed' }, metadata: { api_version: expect.any(String), environment: 'development', request_id: expect.any(String), sequence: 1 } });
    expect(payload.id).toMatch(/^evt_/);
    expect(new Date(payload.created_at as string).toISOString()).toBe(payload.created_at);
    expect(delivery!.headers).toMatchObject({ 'x-cheese-event-id': payload.id, 'x-cheese-event-type': 'order.placed', 'x-cheese-delivery-attempt': '1', 'webhook-id': payload.id, 'content-type': 'application/json' });
    const [staffCopy] = await receiver.waitFor('/staff-orders', 1);
    expect(verify(staffCopy!, all.secret)).toMatchObject({ id: payload.id });
    // The fan-out that made the staff copy's delivery made every delivery of this event, in one
    // transaction: none was made for the other customer's webhook, so none can ever arrive.
    expect(await t.database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', theirs.id).execute()).toEqual([]);
    expect(receiver.at('/theirs')).toEqual([]);
    expect(theirs.id).toBeGreaterThan(0);
    // The attempt is logged once the receiver's answer is in: after the receiver saw the request.
    await expect
      .poll(async () => (await attempts(mine.id, me)).items)
      .toEqual([expect.objectContaining({ eventId: payload.id, eventType: 'order.placed', attempt: 1, outcome: 'delivered', statusCode: 200, error: null, nextAttemptAt: null })]);
  });

  it('POST /test sends webhook.test at once and answers with the outcome; a failing receiver gets one attempt, dead-lettered', async () => {
    const me = await customer();
    const hook = await register(me, '/test-ok', ['cheese.new_arrival']);
    const res = await t.http.post(`/v2/webhooks/${hook.id}/test`, { headers: me });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'delivered', statusCode: 200, error: null });
    const [received] = receiver.at('/test-ok');
    expect(verify(received!, hook.secret)).toMatchObject({ id: res.body.eventId, type: 'webhook.test', data: { webhook_id: String(hook.id) } });

    receiver.on('/test-down', () => ({ status: 500 }));
    const down = await register(me, '/test-down', ['cheese.new_arrival']);
    const failed = await t.http.post(`/v2/webhooks/${down.id}/test`, { headers: me });
    expect(failed.body).toMatchObject({ outcome: 'dead_lettered', statusCode: 500, error: 'answered 500' });
    // A later event this webhook subscribes to: once the dispatcher has fanned it out, it has
    // fanned out the test event before it (the log is consumed in order), so any delivery of the
    // test event but the one attempt would exist by now.
    await cheese();
    const deliveries = () => t.database.db.selectFrom('webhook_deliveries').select(['event_id', 'event_type', 'state', 'attempts']).where('webhook_id', '=', down.id).orderBy('id').execute();
    await expect.poll(async () => (await deliveries()).map((d) => d.event_type), { timeout: 5000 }).toContain('cheese.new_arrival');
    expect((await deliveries()).filter((d) => d.event_id === failed.body.eventId)).toEqual([{ event_id: failed.body.eventId, event_type: 'webhook.test', state: 'dead', attempts: 1 }]);
    expect(receiver.at('/test-down').filter((r) => r.headers['webhook-id'] === failed.body.eventId)).toHaveLength(1);
  });

  it('a failing receiver is retried at the schedule, then dead-lettered; replay delivers; the log filters and pages', async () => {
    receiver.on('/flaky', (n) => ({ status: n <= 3 ? 503 : 200 }));
    const me = await customer();
    const hook = await register(me, '/flaky', ['order.placed']);
    await order(me, (await cheese()).id);
    const tries = await receiver.waitFor('/flaky', 3);
    // Schedule [0, 0.2, 0.4] s, counted from the fan-out (not from the first attempt, which a busy
    // dispatcher may send late): attempt 2 never comes before 0.2 s, attempt 3 before 0.4 s.
    const { schedule_start } = await t.database.db.selectFrom('webhook_deliveries').select('schedule_start').where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();
    const start = new Date(schedule_start).getTime();
    expect(tries[1]!.at - start).toBeGreaterThanOrEqual(195);
    expect(tries[2]!.at - start).toBeGreaterThanOrEqual(395);
    expect(tries[2]!.at).toBeGreaterThan(tries[1]!.at);
    expect(tries.map((r) => r.headers['x-cheese-delivery-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(tries.map((r) => r.headers['webhook-id'])).size).toBe(1);
    await expect.poll(async () => (await attempts(hook.id, me)).items.map((a: { outcome: string }) => a.outcome), { timeout: 3000 }).toEqual(['dead_lettered', 'failed', 'failed']);
    const log = await attempts(hook.id, me);
    expect(log.items[2]).toMatchObject({ attempt: 1, statusCode: 503, error: 'answered 503', nextAttemptAt: expect.any(String) });
    expect(log.items[0]).toMatchObject({ attempt: 3, nextAttemptAt: null });
    expect((await attempts(hook.id, me, '?outcome=failed')).items).toHaveLength(2);
    const page = await attempts(hook.id, me, '?limit=2');
    expect(page).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    expect((await attempts(hook.id, me, `?limit=2&cursor=${page.nextCursor}`)).items.map((a: { attempt: number }) => a.attempt)).toEqual([1]);
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries?cursor=bogus`, { headers: me })).status).toBe(400);

    const replay = await t.http.post(`/v2/webhooks/${hook.id}/replay`, { headers: me });
    expect(replay.body).toEqual({ requeued: 1 });
    const [, , , fourth] = await receiver.waitFor('/flaky', 4);
    expect(fourth!.headers['x-cheese-delivery-attempt']).toBe('1');
    expect(verify(fourth!, hook.secret)).toMatchObject({ type: 'order.placed' });
    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay`, { headers: me })).body).toEqual({ requeued: 0 });
  });

  it('a hanging receiver fails at the timeout without holding up another webhook', async () => {
    receiver.on('/hangs', () => ({ status: 200, hang: true }));
    const me = await customer();
    const slow = await register(me, '/hangs', ['order.placed'], { maxAttempts: 5 });
    const fast = await register(me, '/fast', ['order.placed']);
    await order(me, (await cheese()).id);
    await receiver.waitFor('/fast', 1);
    // The other webhook's event arrived while the hanging attempt still waited for its answer (2 s).
    expect((await attempts(slow.id, me)).items).toEqual([]);
    expect(fast.id).toBeGreaterThan(0);
    await expect.poll(async () => (await attempts(slow.id, me)).items[0]?.error, { timeout: 5000 }).toBe('no answer within 2000 ms');
    expect((await attempts(slow.id, me)).items[0]).toMatchObject({ statusCode: null, latencyMs: expect.any(Number) });
    expect((await attempts(slow.id, me)).items[0].latencyMs).toBeGreaterThanOrEqual(1900);
  });

  it('410 Gone disables the webhook and says why; PATCH active:true resumes it', async () => {
    receiver.on('/gone', (n) => ({ status: n === 1 ? 410 : 200 }));
    const me = await customer();
    const hook = await register(me, '/gone', ['order.placed']);
    await order(me, (await cheese()).id);
    await expect.poll(async () => (await t.http.get(`/v2/webhooks/${hook.id}`, { headers: me })).body.active, { timeout: 3000 }).toBe(false);
    const disabled = (await t.http.get(`/v2/webhooks/${hook.id}`, { headers: me })).body;
    expect(disabled.disabledReason).toContain('410');
    expect((await attempts(hook.id, me)).items[0]).toMatchObject({ outcome: 'dead_lettered', statusCode: 410 });
    // Disabled: new events are not fanned out to it (a staff webhook on the same event shows the fan-out done).
    await register(staff, '/gone-witness', ['order.placed']);
    await order(me, (await cheese()).id);
    await receiver.waitFor('/gone-witness', 1);
    expect(await t.database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).execute()).toHaveLength(1);
    expect(receiver.at('/gone')).toHaveLength(1);
    const resumed = await t.http.patch(`/v2/webhooks/${hook.id}`, { headers: me, json: { active: true } });
    expect(resumed.body).toMatchObject({ active: true, disabledReason: null });
    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay`, { headers: me })).body).toEqual({ requeued: 1 });
    await receiver.waitFor('/gone', 2);
  });

  it('Retry-After on 429 postpones the next attempt, within the schedule', async () => {
    receiver.on('/busy', (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    const me = await customer();
    await register(me, '/busy', ['order.placed']);
    await order(me, (await cheese()).id);
    const [first, second] = await receiver.waitFor('/busy', 2);
    const hook = await t.database.db.selectFrom('webhook_deliveries').innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id').select('webhook_deliveries.schedule_start').where('webhooks.url', 'like', '%/busy').executeTakeFirstOrThrow();
    // The schedule alone would retry 0.2 s after the fan-out; Retry-After asks 1 s, capped at the
    // schedule's last attempt (0.4 s after the fan-out). Counted from the fan-out, not from the
    // first attempt, which a busy dispatcher may send late.
    const start = new Date(hook.schedule_start).getTime();
    expect(second!.at - start).toBeGreaterThanOrEqual(395);
    expect(second!.at).toBeGreaterThan(first!.at);
  });

  it('after a secret rotation both secrets verify until the overlap ends', async () => {
    const me = await customer();
    const hook = await register(me, '/rotated', ['order.placed']);
    const rotated = await t.http.post(`/v2/webhooks/${hook.id}/rotate-secret`, { headers: me });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    await order(me, (await cheese()).id);
    const [delivery] = await receiver.waitFor('/rotated', 1);
    verify(delivery!, hook.secret);
    verify(delivery!, rotated.body.secret);
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const wrong = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(() => new StandardWebhook(wrong).verify(delivery!.raw, delivery!.headers as Record<string, string>)).toThrow();
  });
});
