import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * What the API gained with the dashboard's webhooks pages (issue 19, API parity): several
 * outcomes (and `pending`) and a time range on the attempt log, an attempt's detail, replaying
 * chosen events, and the dead letters across webhooks with their replay.
 */
let t: TestApp;
let staff: Record<string, string>;
let receiver: Receiver;
let seq = 0;
/** Answers 500 with a body of 3001 ASCII bytes, a NUL, then two-byte characters: more than 4 KB. */
let noisy: http.Server;
const NOISY_BODY = `${'a'.repeat(3000)}\u0000${'é'.repeat(2000)}`;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ workers: true }));
  receiver = await new Receiver().start();
  noisy = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(NOISY_BODY)));
  await new Promise<void>((resolve) => noisy.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  noisy?.closeAllConnections();
  await new Promise((resolve) => noisy?.close(resolve));
});

const customer = async () => bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses', 'read:profile'], 'customer'));

async function register(headers: Record<string, string>, url: string) {
  const res = await t.http.post('/v2/webhooks', { headers, json: { url, events: ['order.*'] } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; secret: string };
}

/** A webhook with `dead` dead-lettered and `delivered` delivered test events (the receiver decides by order of arrival). */
async function withLog(headers: Record<string, string>, outcomes: ('dead' | 'delivered')[]) {
  const path = `/log-${++seq}`;
  receiver.on(path, (n) => ({ status: outcomes[n - 1] === 'dead' ? 500 : 200 }));
  const hook = await register(headers, receiver.url(path));
  const events: string[] = [];
  for (const _ of outcomes) events.push((await t.http.post(`/v2/webhooks/${hook.id}/test`, { headers })).body.eventId);
  return { ...hook, path, events };
}

const log = async (id: number, headers: Record<string, string>, query = '') => {
  const res = await t.http.get(`/v2/webhooks/${id}/deliveries${query}`, { headers });
  expect(res.status, res.text).toBe(200);
  return res.body as { items: { id: number; eventId: string; outcome: string; createdAt: string }[]; hasMore: boolean; nextCursor: string | null };
};
const states = async (id: number) => (await t.database.db.selectFrom('webhook_deliveries').select(['event_id', 'state']).where('webhook_id', '=', id).orderBy('id').execute()).map((row) => row.state);

describe('GET /webhooks/{id}/deliveries', () => {
  it('filters by several outcomes at once, repeated, and by a time range; one outcome still works', async () => {
    const me = await customer();
    const hook = await withLog(me, ['delivered', 'dead', 'delivered']);
    expect((await log(hook.id, me, '?outcome=delivered&outcome=dead_lettered')).items).toHaveLength(3);
    expect((await log(hook.id, me, '?outcome=dead_lettered')).items.map((a) => a.eventId)).toEqual([hook.events[1]]);
    expect((await log(hook.id, me, '?outcome=failed')).items).toEqual([]);
    const all = (await log(hook.id, me)).items;
    const middle = all[1]!.createdAt;
    const fromMiddle = await log(hook.id, me, `?from=${encodeURIComponent(middle)}`);
    expect(fromMiddle.items.map((a) => a.id)).toEqual(all.filter((a) => a.createdAt >= middle).map((a) => a.id));
    const beforeMiddle = await log(hook.id, me, `?to=${encodeURIComponent(middle)}`);
    expect(beforeMiddle.items.map((a) => a.id)).toEqual(all.filter((a) => a.createdAt < middle).map((a) => a.id));
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries?from=${encodeURIComponent(middle)}&to=2000-01-01T00:00:00Z`, { headers: me })).status).toBe(422);
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries?outcome=lost`, { headers: me })).status).toBe(400);
  });

  it('outcome=pending: the failed attempts whose delivery still waits for its next attempt', async () => {
    const me = await customer();
    const hook = await withLog(me, ['dead', 'dead']);
    const [waiting] = await t.database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.id).orderBy('id').execute();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    await t.database.db.updateTable('webhook_attempts').set({ outcome: 'failed', next_attempt_at: tomorrow }).where('delivery_id', '=', waiting!.id).execute();
    await t.database.db.updateTable('webhook_deliveries').set({ state: 'pending', next_attempt_at: tomorrow }).where('id', '=', waiting!.id).execute();
    expect((await log(hook.id, me, '?outcome=pending')).items.map((a) => a.eventId)).toEqual([hook.events[0]]);
    expect((await log(hook.id, me, '?outcome=pending&outcome=dead_lettered')).items.map((a) => a.eventId)).toEqual([hook.events[1], hook.events[0]]);
    // Once another attempt follows, the failed one is no longer pending.
    await t.database.db.updateTable('webhook_deliveries').set({ state: 'dead' }).where('id', '=', waiting!.id).execute();
    expect((await log(hook.id, me, '?outcome=pending')).items).toEqual([]);
    expect((await log(hook.id, me, '?outcome=failed')).items.map((a) => a.eventId)).toEqual([hook.events[0]]);
  });
});

describe('GET /webhooks/{id}/deliveries/{attemptId}', () => {
  it('shows the headers and body sent (signatures, never the secret), the status, the error class and the first 4 KB of the answer', async () => {
    const me = await customer();
    const hook = await register(me, `http://127.0.0.1:${(noisy.address() as AddressInfo).port}/noisy`);
    const tested = (await t.http.post(`/v2/webhooks/${hook.id}/test`, { headers: me })).body;
    expect(tested.outcome).toBe('dead_lettered');
    const [attempt] = (await log(hook.id, me)).items;
    const res = await t.http.get(`/v2/webhooks/${hook.id}/deliveries/${attempt!.id}`, { headers: me });
    expect(res.status, res.text).toBe(200);
    const detail = res.body;
    expect(detail).toMatchObject({ id: attempt!.id, eventId: tested.eventId, eventType: 'webhook.test', attempt: 1, outcome: 'dead_lettered', statusCode: 500, error: 'answered 500', errorClass: 'http_error', deliveryState: 'dead', nextAttemptAt: null });
    expect(detail.request.headers).toMatchObject({ 'webhook-id': tested.eventId, 'x-cheese-event-type': 'webhook.test', 'x-cheese-delivery-attempt': '1', 'content-type': 'application/json' });
    expect(detail.request.headers['webhook-signature']).toMatch(/^v1,/);
    expect(detail.request.headers['x-cheese-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(JSON.parse(detail.request.body)).toMatchObject({ id: tested.eventId, type: 'webhook.test', data: { webhook_id: String(hook.id) } });
    expect(Number(detail.request.headers['content-length'])).toBe(Buffer.byteLength(detail.request.body));
    expect(res.text).not.toContain(hook.secret.slice(6));
    // 4096 bytes at most, cut on a character boundary; the NUL (which PostgreSQL text refuses) replaced.
    const kept = detail.response.body as string;
    expect(detail.response.statusCode).toBe(500);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(kept)).toBeGreaterThan(4090);
    expect(kept).toBe(NOISY_BODY.replace('\u0000', '\ufffd').slice(0, kept.length));
    expect(kept.endsWith('é')).toBe(true);
  });

  it('answers what a delivered attempt sent, as the receiver got it; another webhook\'s attempt and another account\'s are 404; a weaker credential 403', async () => {
    const me = await customer();
    const hook = await withLog(me, ['delivered']);
    const other = await withLog(me, ['delivered']);
    const [attempt] = (await log(hook.id, me)).items;
    const [received] = await receiver.waitFor(hook.path, 1);
    const detail = (await t.http.get(`/v2/webhooks/${hook.id}/deliveries/${attempt!.id}`, { headers: me })).body;
    expect(detail).toMatchObject({ outcome: 'delivered', statusCode: 200, errorClass: null, deliveryState: 'delivered', response: { statusCode: 200, body: 'ok' } });
    expect(detail.request.body).toBe(received!.raw);
    expect(detail.request.headers['webhook-signature']).toBe(received!.headers['webhook-signature']);
    expect((await t.http.get(`/v2/webhooks/${other.id}/deliveries/${attempt!.id}`, { headers: me })).status).toBe(404);
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries/${attempt!.id}`, { headers: await customer() })).status).toBe(404);
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries/${attempt!.id}`, { headers: staff })).status).toBe(200);
    const catalogueOnly = bearer((await t.http.post('/v2/api-keys', { headers: me, json: { scopes: ['read:cheeses'] } })).body.key);
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries/${attempt!.id}`, { headers: catalogueOnly })).status).toBe(403);
  });
});

describe('POST /webhooks/{id}/replay with eventIds', () => {
  it('replays those settled events only, delivered ones included; at most 100', async () => {
    const me = await customer();
    const hook = await withLog(me, ['dead', 'dead', 'delivered', 'dead']);
    receiver.on(hook.path, () => ({ status: 200 }));
    const chosen = [hook.events[0]!, hook.events[2]!];
    const res = await t.http.post(`/v2/webhooks/${hook.id}/replay?eventIds=${chosen[0]}&eventIds=${chosen[1]}`, { headers: me });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ requeued: 2 });
    await receiver.waitFor(hook.path, 6);
    await expect.poll(() => states(hook.id), { timeout: 5000 }).toEqual(['delivered', 'dead', 'delivered', 'dead']);
    const replayedIds = receiver.at(hook.path).slice(4).map((r) => String(r.headers['webhook-id']));
    expect(replayedIds.sort()).toEqual([...chosen].sort());
    // An event of another webhook, or unknown, replays nothing.
    const other = await withLog(me, ['dead']);
    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay?eventIds=${other.events[0]}`, { headers: me })).body).toEqual({ requeued: 0 });
    expect(await states(other.id)).toEqual(['dead']);
    const many = Array.from({ length: 101 }, (_, i) => `eventIds=evt_${i.toString(16).padStart(32, '0')}`).join('&');
    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay?${many}`, { headers: me })).status).toBe(400);
    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay?eventIds=not-an-event`, { headers: me })).status).toBe(400);
    // Still no body: a client sending an empty JSON body keeps working.
    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay`, { headers: { ...me, 'content-type': 'application/json' }, body: '' })).status).toBe(200);
  });
});

describe('the dead letters across webhooks', () => {
  it('GET /webhooks/dead-letters lists the caller\'s, newest first, by page; one webhook\'s; never another account\'s', async () => {
    const me = await customer();
    const a = await withLog(me, ['dead', 'delivered', 'dead']);
    const b = await withLog(me, ['dead']);
    const theirs = await withLog(await customer(), ['dead']);
    const res = await t.http.get('/v2/webhooks/dead-letters', { headers: me });
    expect(res.status, res.text).toBe(200);
    expect(res.body.items.map((d: { eventId: string }) => d.eventId)).toEqual([b.events[0], a.events[2], a.events[0]]);
    expect(res.body.items[0]).toMatchObject({ webhookId: b.id, webhookUrl: receiver.url(b.path), eventType: 'webhook.test', attempts: 1, lastStatusCode: 500, lastError: 'answered 500', deadLetteredAt: expect.any(String), deliveryId: expect.any(Number) });
    const first = await t.http.get('/v2/webhooks/dead-letters?limit=2', { headers: me });
    expect(first.body).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const second = await t.http.get(`/v2/webhooks/dead-letters?limit=2&cursor=${first.body.nextCursor}`, { headers: me });
    expect(second.body.items.map((d: { eventId: string }) => d.eventId)).toEqual([a.events[0]]);
    expect(second.body.hasMore).toBe(false);
    expect((await t.http.get(`/v2/webhooks/dead-letters?webhookId=${a.id}`, { headers: me })).body.items).toHaveLength(2);
    expect((await t.http.get(`/v2/webhooks/dead-letters?webhookId=${theirs.id}`, { headers: me })).status).toBe(404);
    expect(res.text).not.toContain(theirs.events[0]);
    const everyone = await t.http.get('/v2/webhooks/dead-letters?limit=100', { headers: staff });
    expect(everyone.body.items.map((d: { eventId: string }) => d.eventId)).toEqual(expect.arrayContaining([theirs.events[0], a.events[0]]));
  });

  it('POST /webhooks/dead-letters/replay replays the named ones or all, of the caller\'s only', async () => {
    const me = await customer();
    const a = await withLog(me, ['dead', 'dead']);
    const b = await withLog(me, ['dead']);
    const them = await customer();
    const theirs = await withLog(them, ['dead']);
    for (const hook of [a, b, theirs]) receiver.on(hook.path, () => ({ status: 200 }));
    const ids = async (id: number) => (await t.database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).orderBy('id').execute()).map((row) => Number(row.id));
    const [a1] = await ids(a.id);
    const [t1] = await ids(theirs.id);
    const named = await t.http.post(`/v2/webhooks/dead-letters/replay?deliveryIds=${a1}&deliveryIds=${t1}`, { headers: me });
    expect(named.status, named.text).toBe(200);
    expect(named.body).toEqual({ requeued: 1 });
    await expect.poll(() => states(a.id), { timeout: 5000 }).toEqual(['delivered', 'dead']);
    expect(await states(theirs.id)).toEqual(['dead']);
    expect((await log(a.id, me)).items.map((x) => x.outcome)).toEqual(['delivered', 'dead_lettered', 'dead_lettered']);
    expect((await t.http.post('/v2/webhooks/dead-letters/replay', { headers: me })).body).toEqual({ requeued: 2 });
    await expect.poll(async () => [...(await states(a.id)), ...(await states(b.id))], { timeout: 5000 }).toEqual(['delivered', 'delivered', 'delivered']);
    expect(await states(theirs.id)).toEqual(['dead']);
    // Staff, for one account.
    const username = (await t.http.get('/v2/webhooks', { headers: them })).body.items[0].owner as string;
    expect((await t.http.post(`/v2/webhooks/dead-letters/replay?account=${username}`, { headers: staff })).body).toEqual({ requeued: 1 });
    await expect.poll(() => states(theirs.id), { timeout: 5000 }).toEqual(['delivered']);
  });

  it('covers only the webhooks the credential may manage', async () => {
    const me = await customer();
    const hook = await withLog(me, ['dead']);
    const catalogueOnly = bearer((await t.http.post('/v2/api-keys', { headers: me, json: { scopes: ['read:cheeses'] } })).body.key);
    expect((await t.http.get('/v2/webhooks/dead-letters', { headers: catalogueOnly })).body.items).toEqual([]);
    expect((await t.http.post('/v2/webhooks/dead-letters/replay', { headers: catalogueOnly })).body).toEqual({ requeued: 0 });
    expect((await t.http.get(`/v2/webhooks/dead-letters?webhookId=${hook.id}`, { headers: catalogueOnly })).status).toBe(403);
    expect(await states(hook.id)).toEqual(['dead']);
  });
});

describe('GET /webhooks?account=', () => {
  it('lets staff list one account\'s webhooks; anyone else naming another account gets none', async () => {
    const me = await customer();
    const hook = await register(me, receiver.url('/by-account'));
    const owner = (await t.http.get(`/v2/webhooks/${hook.id}`, { headers: me })).body.owner as string;
    expect((await t.http.get(`/v2/webhooks?account=${owner}`, { headers: staff })).body.items.map((w: { id: number }) => w.id)).toEqual([hook.id]);
    expect((await t.http.get(`/v2/webhooks?account=${owner}`, { headers: me })).body.items.map((w: { id: number }) => w.id)).toEqual([hook.id]);
    expect((await t.http.get('/v2/webhooks?account=admin', { headers: me })).body.items).toEqual([]);
  });
});
