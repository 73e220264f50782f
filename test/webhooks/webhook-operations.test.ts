import fs from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/outbox/outbox.module.js';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * What an operator and a receiver rely on beyond a single delivery: the SSRF guard in
 * production, replay of a time range, retention, and scheduled events reaching webhooks
 * through the same path, once each.
 */
let t: TestApp;
let staff: Record<string, string>;
let receiver: Receiver;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ workers: true }));
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const DAY = 86_400_000;

async function register(app: TestApp, headers: Record<string, string>, url: string, events: string[]) {
  const res = await app.http.post('/v2/webhooks', { headers, json: { url, events } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; secret: string };
}

async function newArrival(name: string): Promise<void> {
  const res = await t.http.post('/v2/cheeses', { headers: staff, json: { name, pricePerKg: 15, stockQuantityKg: 20 } });
  expect(res.status).toBe(201);
}

describe('the SSRF guard in production', () => {
  let production: TestApp;
  let productionStaff: Record<string, string>;
  beforeAll(async () => {
    production = await createTestApp({ env: 'production' });
    productionStaff = bearer(await production.key(['admin']));
  });
  afterAll(() => production.close());

  it('refuses at registration a URL that is, or resolves to, a loopback, private or link-local address: 422 naming url', async () => {
    const before = await production.database.db.selectFrom('webhooks').select('id').execute();
    for (const url of ['http://127.0.0.1:9/x', 'http://localhost:9/x', 'http://10.1.2.3/x', 'http://192.168.0.10/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://[fd00::1]/x']) {
      const res = await production.http.post('/v2/webhooks', { headers: productionStaff, json: { url, events: ['cheese.*'] } });
      expect(res.status, url).toBe(422);
      expect(res.body.errors.map((e: { field: string }) => e.field), url).toContain('url');
    }
    expect(await production.database.db.selectFrom('webhooks').select('id').execute()).toEqual(before);
  });

  it('checks the address again when it connects: a target that turned private is never reached (DNS rebinding)', async () => {
    // Registered while public; the host now points at loopback, as a rebinding attacker would arrange.
    const hook = await register(production, productionStaff, 'http://93.184.216.34/hooks', ['cheese.*']);
    await production.database.db.updateTable('webhooks').set({ url: receiver.url('/rebound') }).where('id', '=', hook.id).execute();
    const res = await production.http.post(`/v2/webhooks/${hook.id}/test`, { headers: productionStaff });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'dead_lettered', statusCode: null });
    expect(res.body.error).toContain('may not reach');
    expect(receiver.at('/rebound')).toHaveLength(0);
  });
});

describe('the cap of 10 webhooks per account', () => {
  it('holds under concurrent registrations: exactly 10 are created, the rest are 409 and create nothing', async () => {
    const customer = bearer(await t.key(['read:cheeses'], 'customer'));
    const answers = await Promise.all(Array.from({ length: 14 }, (_, i) => t.http.post('/v2/webhooks', { headers: customer, json: { url: receiver.url(`/cap/${i}`), events: ['cheese.*'] } })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => a.status)).toEqual([409, 409, 409, 409]);
    expect(refused[0]!.body).toMatchObject({ code: 409, type: 'conflict' });
    expect((await t.http.get('/v2/webhooks?limit=100', { headers: customer })).body.items).toHaveLength(10);
  });
});

describe('replay', () => {
  it('with from/to, sends every settled event of that range again, delivered ones included; outside it, none', async () => {
    const hook = await register(t, staff, receiver.url('/range'), ['cheese.new_arrival']);
    await newArrival('Replay range cheese 1');
    await receiver.waitFor('/range', 1);
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await newArrival('Replay range cheese 2');
    const firstTwo = await receiver.waitFor('/range', 2);
    const secondId = String(firstTwo[1]!.headers['webhook-id']);
    // Wait until the second delivery is recorded as delivered, or it is not yet replayable.
    for (let i = 0; i < 100; i++) {
      const state = await t.database.db.selectFrom('webhook_deliveries').select('state').where('event_id', '=', secondId).executeTakeFirst();
      if (state?.state === 'delivered') break;
      await new Promise((r) => setTimeout(r, 20));
    }

    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z`, { headers: staff })).body).toEqual({ requeued: 0 });
    expect((await t.http.post(`/v2/webhooks/${hook.id}/replay`, { headers: staff })).body).toEqual({ requeued: 0 }); // nothing dead-lettered
    const bad = await t.http.post(`/v2/webhooks/${hook.id}/replay?from=${between}&to=2000-01-01T00:00:00Z`, { headers: staff });
    expect(bad.status).toBe(422);

    // An offset other than Z means the same instant.
    const fromWithOffset = new Date(Date.parse(between) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    const replayed = await t.http.post(`/v2/webhooks/${hook.id}/replay?from=${encodeURIComponent(fromWithOffset)}`, { headers: staff });
    expect(replayed.body).toEqual({ requeued: 1 });
    const all = await receiver.waitFor('/range', 3);
    expect(String(all[2]!.headers['webhook-id'])).toBe(secondId);
    expect(all[2]!.headers['x-cheese-delivery-attempt']).toBe('1');
  });
});

describe('retention', () => {
  it('the prune job removes settled deliveries and attempts past the retention, then outbox rows nothing needs; keeps the rest', async () => {
    const hook = await register(t, staff, receiver.url('/retained'), ['cheese.new_arrival']);
    receiver.on('/dead', () => ({ status: 500 }));
    const dead = await register(t, staff, receiver.url('/dead'), ['cheese.new_arrival']);
    await newArrival('Retention cheese');
    await receiver.waitFor('/retained', 1);
    await receiver.waitFor('/dead', 3); // the test schedule has three attempts
    const db = t.database.db;
    const settled = async () => db.selectFrom('webhook_deliveries').select(['id', 'state', 'outbox_id', 'webhook_id']).where('webhook_id', 'in', [hook.id, dead.id]).execute();
    for (let i = 0; i < 100 && (await settled()).some((d) => d.state === 'pending'); i++) await new Promise((r) => setTimeout(r, 20));
    const rows = await settled();
    expect(rows.map((r) => r.state).sort()).toEqual(['dead', 'delivered']);
    const outboxId = rows[0]!.outbox_id;

    // 29 days later: everything is still there.
    await t.runJob('webhooks.prune', new Date(Date.now() + 29 * DAY));
    expect(await settled()).toHaveLength(2);
    expect(await db.selectFrom('outbox').select('id').where('id', '=', outboxId).execute()).toHaveLength(1);
    // 31 days later: the deliveries, their attempts, and then (the outbox's own prune, EVENT_RETENTION_DAYS: issue 21) the event itself are gone.
    expect(await t.runJob('webhooks.prune', new Date(Date.now() + 31 * DAY))).toBeGreaterThan(0);
    expect(await t.runJob('outbox.prune', new Date(Date.now() + 31 * DAY))).toBeGreaterThan(0);
    expect(await settled()).toHaveLength(0);
    expect(await db.selectFrom('webhook_attempts').select('id').where('webhook_id', 'in', [hook.id, dead.id]).execute()).toHaveLength(0);
    expect(await db.selectFrom('outbox').select('id').where('id', '=', outboxId).execute()).toHaveLength(0);
    // The log says so too.
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries`, { headers: staff })).body.items).toEqual([]);
  });
});

describe('scheduled events', () => {
  it('api_key.expiring reaches the account\'s webhook once, however often the job runs', async () => {
    const customer = bearer(await t.key(['read:cheeses', 'read:profile', 'write:profile'], 'customer'));
    const hook = await register(t, customer, receiver.url('/expiring'), ['api_key.expiring']);
    const soon = new Date(Date.now() + 3 * DAY).toISOString();
    const created = await t.http.post('/v2/api-keys', { headers: customer, json: { name: 'short-lived', scopes: ['read:cheeses'], expiresAt: soon } });
    expect(created.status, created.text).toBe(201);
    expect(await t.runJob('api_key.expiring')).toBeGreaterThanOrEqual(1);
    expect(await t.runJob('api_key.expiring')).toBe(0);
    const [delivery] = await receiver.waitFor('/expiring', 1);
    const event = JSON.parse(delivery!.raw);
    expect(event).toMatchObject({ type: 'api_key.expiring', data: { api_key_id: String(created.body.id), name: 'short-lived' } });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at('/expiring')).toHaveLength(1);
    expect((await t.http.get(`/v2/webhooks/${hook.id}/deliveries`, { headers: customer })).body.items).toHaveLength(1);
  });
});

describe('the OpenAPI document', () => {
  it('describes the request of every event kind under `webhooks`, and a real delivery matches it', async () => {
    const document = JSON.parse(fs.readFileSync('docs/openapi.json', 'utf8')) as { components: object; webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> }; parameters: { name: string }[] } }> };
    expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    const hook = await register(t, staff, receiver.url('/documented'), ['cheese.new_arrival']);
    await newArrival('Documented cheese');
    const [delivery] = await receiver.waitFor('/documented', 1);
    const test = await t.http.post(`/v2/webhooks/${hook.id}/test`, { headers: staff });
    expect(test.body.outcome).toBe('delivered');
    const [, testDelivery] = await receiver.waitFor('/documented', 2);
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    for (const received of [delivery!, testDelivery!]) {
      const body = JSON.parse(received.raw) as { type: string };
      const operation = document.webhooks[body.type]!.post;
      // The envelope is a shared component (issue 21): its $ref resolves within the document's components.
      const validate = ajv.compile({ ...operation.requestBody.content['application/json']!.schema, components: document.components });
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
      for (const { name } of operation.parameters) expect(received.headers, name).toHaveProperty(name.toLowerCase());
    }
  });
});
