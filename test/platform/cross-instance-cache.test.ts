import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { broadcastChannel } from '../../src/db/change-broadcast.js';
import { recordEvent } from '../../src/modules/outbox/outbox.writer.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestStorage, DIALECT, POSTGRES_URL, processEnvFor, type TestStorage } from '../helpers/database.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';
import { apiKey, bearer } from '../helpers/http.js';

/**
 * Issue 20: two instances on one database. A catalogue write or a revocation on one is seen
 * by the other within a second, although both caches are set to trust what they hold for a
 * minute: only the change broadcast (src/db/change-broadcast.ts) can explain it. PostgreSQL
 * carries it by LISTEN/NOTIFY; on SQLite (one instance) it joins the apps of this process.
 */
const MINUTE = 60_000;
const DEADLINE_MS = 3_000;
let storage: TestStorage;
let a: TestApp;
let b: TestApp;
let admin: Record<string, string>;
const measured: Record<string, number> = {};

beforeAll(async () => {
  storage = await createTestStorage();
  const config = { readCacheTtlMs: MINUTE, authCacheTtlMs: MINUTE };
  a = await createTestApp({ storage, config });
  b = await createTestApp({ storage, config });
  admin = bearer(await a.key(['admin']));
}, 60_000);
afterAll(async () => {
  console.error(`cross-instance visibility on ${DIALECT} (ms):`, measured);
  await a?.close();
  await b?.close();
  await storage?.dispose();
});

/**
 * Polls `check` until it holds, for at most DEADLINE_MS: far below the minute the caches trust
 * what they hold, so only the broadcast can make it hold in time. How long it took is a figure
 * for the log, not an assertion.
 */
async function within(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  await expect.poll(check, { timeout: DEADLINE_MS, interval: 20, message: `${what}: not seen within ${DEADLINE_MS} ms` }).toBe(true);
  measured[what] = Math.round(performance.now() - started);
}

let seq = 0;
async function newCheese(): Promise<{ id: number; name: string }> {
  const res = await a.http.post('/v2/cheeses', { headers: admin, json: { name: `Shared ${DIALECT} cheese ${++seq}`, pricePerKg: 20, stockQuantityKg: 500, status: 'available' } });
  expect(res.status).toBe(201);
  return res.body;
}

/** Reads it on B until B serves it from its read cache (two identical answers, the second a hit). */
async function cachedOnB(path: string, headers: Record<string, string>) {
  const first = await b.http.get(path, { headers });
  const second = await b.http.get(path, { headers });
  expect(second.status).toBe(200);
  expect(second.text).toBe(first.text);
  return second;
}

describe('the read cache across instances', () => {
  it('shows a catalogue write on A at B within a second, with the same bytes and ETag, and a 304 on B for A\'s ETag', async () => {
    const cheese = await newCheese();
    const path = `/v2/cheeses/${cheese.id}`;
    await cachedOnB(path, admin);
    const renamed = `${cheese.name} (renamed)`;
    expect((await a.http.post(`${path}?name=${encodeURIComponent(renamed)}`, { headers: admin })).status).toBe(200);
    await within('catalogue write', async () => (await b.http.get(path, { headers: admin })).body.name === renamed);

    const onA = await a.http.get(path, { headers: admin });
    const onB = await b.http.get(path, { headers: admin });
    expect(onB.text).toBe(onA.text);
    expect(onB.headers.get('etag')).toBe(onA.headers.get('etag'));
    const conditional = await b.http.get(path, { headers: { ...admin, 'if-none-match': onA.headers.get('etag')! } });
    expect(conditional.status).toBe(304);
    // And a list page, cached or not, is the same on both.
    const listA = await a.http.get('/v2/cheeses?limit=5', { headers: admin });
    const listB = await b.http.get('/v2/cheeses?limit=5', { headers: admin });
    expect(listB.headers.get('etag')).toBe(listA.headers.get('etag'));
    expect((await a.http.get('/v2/cheeses?limit=5', { headers: { ...admin, 'if-none-match': listB.headers.get('etag')! } })).status).toBe(304);
  });

  it('shows stock taken by an order on A at B within a second', async () => {
    const cheese = await newCheese();
    const path = `/v2/cheeses/${cheese.id}`;
    expect((await cachedOnB(path, admin)).body.stockQuantityKg).toBe(500);
    const customer = bearer(await a.key(['read:orders', 'write:orders'], 'customer'));
    const order = await a.http.post('/v2/orders', { headers: customer, json: { items: [{ cheeseId: cheese.id, quantity_kg: 2 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } } });
    expect(order.status).toBe(201);
    await within('order stock', async () => (await b.http.get(path, { headers: admin })).body.stockQuantityKg === 498);
  });

  it('tells B of stock taken on an instance that closes inside its coalescing window, without a failed NOTIFY', async () => {
    const cheese = await newCheese();
    const path = `/v2/cheeses/${cheese.id}`;
    expect((await cachedOnB(path, admin)).body.stockQuantityKg).toBe(500);
    const logLines: string[] = [];
    const closing = await createTestApp({ storage, config: { readCacheTtlMs: MINUTE, authCacheTtlMs: MINUTE }, logLines });
    const customer = bearer(await closing.key(['read:orders', 'write:orders'], 'customer'));
    const order = await closing.http.post('/v2/orders', { headers: customer, json: { items: [{ cheeseId: cheese.id, quantity_kg: 3 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } } });
    expect(order.status).toBe(201);
    // Well inside STOCK_BROADCAST_WINDOW_MS (200 ms): the coalesced message is still waiting.
    await closing.close();
    await within('order stock told on close', async () => (await b.http.get(path, { headers: admin })).body.stockQuantityKg === 497);
    expect(logLines.filter((line) => /NOTIFY failed|destroyed/.test(line))).toEqual([]);
  });
});

describe('credential caches across instances', () => {
  it('refuses on B, within a second, an API key revoked on A', async () => {
    const key = await a.key(['read:cheeses', 'write:orders'], 'customer');
    expect((await b.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(200);
    const [own] = (await a.http.get('/v2/api-keys', { headers: apiKey(key) })).body.items;
    expect((await a.http.delete(`/v2/api-keys/${own.id}`, { headers: apiKey(key) })).status).toBe(204);
    await within('api key revoked', async () => (await b.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status === 401);
  });

  it('refuses on B, within a second, a login token logged out on A', async () => {
    const customer = await signUpCustomer(a);
    const login = await a.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } });
    expect(login.status).toBe(200);
    const token = bearer(login.body.token);
    expect((await b.http.get('/v2/cheeses?limit=1', { headers: token })).status).toBe(200);
    expect((await a.http.get('/v2/customer/logout', { headers: token })).status).toBeLessThan(300);
    await within('login token logged out', async () => (await b.http.get('/v2/cheeses?limit=1', { headers: token })).status === 401);
  });

  it('refuses on B, within a second, a dashboard session signed out on A', async () => {
    const customer = await signUpCustomer(a);
    const onA = new FormBrowser(a.http.baseUrl);
    expect((await onA.signIn(customer.username, customer.password)).status).toBe(303);
    const onB = new FormBrowser(b.http.baseUrl);
    for (const [name, value] of onA.cookies) onB.cookies.set(name, value);
    expect((await onB.get('/dashboard')).status).toBe(200);
    await onA.get('/dashboard');
    expect((await onA.post('/dashboard/logout')).status).toBe(303);
    await within('dashboard session signed out', async () => (await onB.get('/dashboard')).status === 303);
  });

  it('refuses on B, within a second, an OAuth access token revoked on A', async () => {
    const registered = await a.http.post('/v2/oauth-clients', { headers: admin, json: { name: 'Cross-instance app', redirectUris: ['http://127.0.0.1:9/cb'], type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] } });
    expect(registered.status).toBe(201);
    const basic = { authorization: `Basic ${Buffer.from(`${registered.body.clientId}:${registered.body.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' };
    const issued = await a.http.post('/oauth/token', { headers: basic, body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read:cheeses' }).toString() });
    expect(issued.status).toBe(200);
    const token = bearer(issued.body.access_token);
    expect((await b.http.get('/v2/cheeses?limit=1', { headers: token })).status).toBe(200);
    expect((await a.http.post('/oauth/revoke', { headers: basic, body: new URLSearchParams({ token: issued.body.access_token }).toString() })).status).toBe(200);
    await within('oauth token revoked', async () => (await b.http.get('/v2/cheeses?limit=1', { headers: token })).status === 401);
  });
});

describe.skipIf(DIALECT !== 'postgres')('the LISTEN connection (PostgreSQL)', () => {
  const schema = () => a.config.databaseSchema ?? 'public';
  /** The instances' LISTEN connections (src/db/notifier.ts): A and B run on one schema, so one each. */
  const listeners = async (client: pg.Client) =>
    (await client.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [`fromagerie-notifier/${schema()}`])).rows.map((row) => row.pid);

  it('has one LISTEN connection per instance, carrying both cache invalidations and outbox wakes again after it is killed', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, query_timeout: 5000 });
    await client.connect();
    let woken = 0;
    const stop = b.database.afterCommitOf('outbox', () => woken++);
    try {
      // Both the commit signal and the change broadcast listen on it: no other LISTEN connection.
      // Each instance connects (and, after the previous test's kill, reconnects) on its own schedule.
      let before: number[] = [];
      await within('both notifiers connected', async () => (before = await listeners(client)).length === 2);
      expect(before).toHaveLength(2);
      woken = 0;
      await client.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [before]);
      let after: number[] = [];
      // A terminated backend stays listed a moment after pg_terminate_backend returns: new ones only.
      await within('both notifiers back', async () => (after = (await listeners(client)).filter((pid) => !before.includes(pid))).length === 2);
      expect(after).toHaveLength(2);
      // B's reconnection wakes its outbox listeners (an insert may have been missed), after LISTENing again.
      await within('wake after notifier reconnect', async () => woken > 0);

      const cheese = await newCheese();
      const path = `/v2/cheeses/${cheese.id}`;
      await cachedOnB(path, admin);
      const renamed = `${cheese.name} (after reconnect)`;
      expect((await a.http.post(`${path}?name=${encodeURIComponent(renamed)}`, { headers: admin })).status).toBe(200);
      await within('catalogue write after notifier reconnect', async () => (await b.http.get(path, { headers: admin })).body.name === renamed);

      woken = 0;
      const context = { requestId: null, environment: 'development' as const, apiVersion: '2' };
      await a.database.db.transaction().execute((trx) => recordEvent(trx, { type: 'webhook.test', audience: 'staff', aggregateType: 'test', aggregateId: 'notifier', data: {} }, context));
      await within('outbox wake after notifier reconnect', async () => woken > 0);
    } finally {
      stop();
      await client.end();
    }
  });

  it('flushes after a reconnect what may have been missed, and hears invalidations again', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, query_timeout: 5000 });
    await client.connect();
    try {
      const cheese = await newCheese();
      const path = `/v2/cheeses/${cheese.id}`;
      await cachedOnB(path, admin);
      // Changed behind every instance's back: no NOTIFY, so only a flush can show it.
      await a.database.db.updateTable('cheeses').set({ name: 'Changed while nobody listened' }).where('id', '=', cheese.id).execute();
      expect((await b.http.get(path, { headers: admin })).body.name).toBe(cheese.name);
      let before: number[] = [];
      await within('both notifiers connected', async () => (before = await listeners(client)).length === 2);
      expect(before).toHaveLength(2);
      await client.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [before]);
      await within('flush after listener reconnect', async () => (await b.http.get(path, { headers: admin })).body.name === 'Changed while nobody listened');
      // Each instance reconnects on its own schedule: B's flush says nothing of A's connection.
      let after: number[] = [];
      await within('both listeners back', async () => (after = (await listeners(client)).filter((pid) => !before.includes(pid))).length === 2);
      expect(after).toHaveLength(2);

      const key = await a.key(['read:cheeses', 'write:orders'], 'customer');
      expect((await b.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(200);
      const [own] = (await a.http.get('/v2/api-keys', { headers: apiKey(key) })).body.items;
      expect((await a.http.delete(`/v2/api-keys/${own.id}`, { headers: apiKey(key) })).status).toBe(204);
      await within('api key revoked after reconnect', async () => (await b.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status === 401);
    } finally {
      await client.end();
    }
  });

  it('refuses on both instances, within a second, a key the operator revoked with the CLI', async () => {
    const key = await a.key(['read:cheeses', 'write:orders'], 'customer');
    expect((await b.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(200);
    expect((await a.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(200);
    const [own] = (await a.http.get('/v2/api-keys', { headers: apiKey(key) })).body.items;
    const owner = await a.database.db.selectFrom('api_keys').innerJoin('accounts', 'accounts.id', 'api_keys.account_id').select('accounts.username').where('api_keys.id', '=', own.id).executeTakeFirstOrThrow();
    await promisify(execFile)(process.execPath, ['bin/fromagerie.js', 'api-keys', 'revoke', '--user', owner.username, '--id', String(own.id)], { env: processEnvFor(storage) });
    const refused = async (app: TestApp) => (await app.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status === 401;
    await within('cli revocation', async () => (await refused(b)) && (await refused(a)));
  }, 60_000);

  it('sends far fewer catalogue NOTIFYs than orders: 100 orders, a handful of notifications', async () => {
    const cheese = await newCheese();
    const customer = bearer(await a.key(['read:orders', 'write:orders'], 'customer'));
    const client = new pg.Client({ connectionString: POSTGRES_URL, query_timeout: 5000 });
    await client.connect();
    let notifications = 0;
    client.on('notification', () => notifications++);
    await client.query(`LISTEN "${broadcastChannel('catalogue', schema())}"`);
    try {
      for (let batch = 0; batch < 10; batch++) {
        const statuses = await Promise.all(
          Array.from({ length: 10 }, () =>
            a.http.post('/v2/orders', { headers: customer, json: { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } } }).then((res) => res.status),
          ),
        );
        expect(statuses).toEqual(Array(10).fill(201));
      }
      // The window still open is sent now (as on close) rather than waited for; then a marker
      // NOTIFY, which no instance takes for a message (no sender id). PostgreSQL delivers a
      // listener's notifications in commit order: once the marker is here, every catalogue
      // NOTIFY sent for the orders has been counted.
      await a.app.modules.catalogue.provides.changes.close();
      let marked = false;
      client.on('notification', (message) => {
        if (message.payload === 'test-marker') marked = true;
      });
      await client.query('select pg_notify($1, $2)', [broadcastChannel('catalogue', schema()), 'test-marker']);
      await expect.poll(() => marked).toBe(true);
      notifications--;
      measured['notifies for 100 orders'] = notifications;
      expect(notifications).toBeGreaterThanOrEqual(1);
      // Coalesced: far fewer than one per order.
      expect(notifications).toBeLessThan(50);
      expect((await b.http.get(`/v2/cheeses/${cheese.id}`, { headers: admin })).body.stockQuantityKg).toBe(400);
    } finally {
      await client.end();
    }
  });
});
