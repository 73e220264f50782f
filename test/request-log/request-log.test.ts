import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { signUpCustomer } from '../helpers/dashboard.js';
import { apiKey, bearer } from '../helpers/http.js';

/**
 * The request log (issue 30 §2): every /v2 request an account makes is recorded once answered,
 * with its credential's public label, never a secret or password; its reader sees its own
 * account's entries (staff: everyone's), filters them, pages them, and tails them (`wait`).
 */
let t: TestApp;
let staff: Record<string, string>;
let cheeseId: number;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
  const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Logged Morbier', pricePerKg: 22, stockQuantityKg: 500, status: 'available' } });
  expect(cheese.status).toBe(201);
  cheeseId = cheese.body.id;
});
afterAll(() => t.close());

const logs = (query: string, headers: Record<string, string>) => t.http.get(`/v2/request-logs${query}`, { headers });

/** Waits until every one of `ids` is listed to `headers` (an entry is written once its answer is done, in a batch). */
async function listed(ids: string[], headers: Record<string, string>): Promise<Array<Record<string, any>>> {
  let items: Array<Record<string, any>> = [];
  await expect
    .poll(async () => {
      await t.app.modules.requestLog.provides.flush();
      items = (await logs('?limit=100', headers)).body.items;
      return ids.filter((id) => !items.some((item) => item.requestId === id));
    }, { timeout: 5000, interval: 20 })
    .toEqual([]);
  return items;
}

const order = { items: [{ cheeseId: '0', quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '3 rue du Jura', city: 'Poligny', country: 'FR' } } };

describe('a mixed run, as a customer makes it', () => {
  let key: string;
  let keyPrefix: string;
  let loginToken: string;
  let customer: { username: string; password: string; accountId: number };
  let webhookSecret: string;
  const newPassword = 'an entirely new passphrase 77';
  const sent: Array<{ id: string; method: string; route: string; status: number }> = [];

  beforeAll(async () => {
    customer = await signUpCustomer(t);
    loginToken = (await t.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } })).body.token;
    const call = async (id: string, method: string, path: string, headers: Record<string, string>, json?: unknown) => {
      const res = await t.http.request(method, path, { headers: { ...headers, 'x-request-id': id }, ...(json !== undefined && { json }) });
      return res;
    };
    const created = await call('mix-key', 'POST', '/v2/api-keys', bearer(loginToken), { name: 'storefront', scopes: ['read:cheeses', 'read:orders', 'write:orders', 'read:logs'] });
    expect(created.status, created.text).toBe(201);
    key = created.body.key;
    keyPrefix = created.body.prefix;
    sent.push({ id: 'mix-key', method: 'POST', route: '/v2/api-keys', status: 201 });
    const k = apiKey(key);
    const webhook = await call('mix-webhook', 'POST', '/v2/webhooks', k, { url: 'http://127.0.0.1:9/hook', events: ['order.placed'] });
    expect(webhook.status, webhook.text).toBe(201);
    webhookSecret = webhook.body.secret;
    sent.push({ id: 'mix-webhook', method: 'POST', route: '/v2/webhooks', status: 201 });
    const placed = await call('mix-order', 'POST', '/v2/orders', { ...k, 'idempotency-key': 'mix-order-key' }, { ...order, items: [{ cheeseId: String(cheeseId), quantity_kg: 1 }] });
    expect(placed.status, placed.text).toBe(201);
    sent.push({ id: 'mix-order', method: 'POST', route: '/v2/orders', status: 201 });
    const missing = await call('mix-missing', 'GET', '/v2/orders/99999999', k);
    sent.push({ id: 'mix-missing', method: 'GET', route: '/v2/orders/:id', status: missing.status });
    expect(missing.status).toBe(404);
    const unrouted = await call('mix-unrouted', 'GET', '/v2/no-such-thing', k);
    expect(unrouted.status).toBe(404);
    sent.push({ id: 'mix-unrouted', method: 'GET', route: '/v2/no-such-thing', status: 404 });
    const invalid = await call('mix-invalid', 'POST', '/v2/orders', k, { items: [] });
    expect(invalid.status).toBeGreaterThanOrEqual(400);
    sent.push({ id: 'mix-invalid', method: 'POST', route: '/v2/orders', status: invalid.status });
    const secretInQuery = await call('mix-query', 'GET', `/v2/cheeses?limit=2&token=${encodeURIComponent(loginToken)}&note=${key}`, k);
    sent.push({ id: 'mix-query', method: 'GET', route: '/v2/cheeses', status: secretInQuery.status });
    const changed = await call('mix-password', 'PUT', `/v2/customer/${customer.username}`, bearer(loginToken), { username: customer.username, email: `${customer.username}@example.com`, password: newPassword, currentPassword: customer.password });
    expect(changed.status, changed.text).toBe(200);
    sent.push({ id: 'mix-password', method: 'PUT', route: '/v2/customer/:username', status: 200 });
  });

  it('records every request, with its method, route, status, credential and Idempotency-Key', async () => {
    const items = await listed(sent.map((s) => s.id), apiKey(key));
    for (const expected of sent) {
      const entry = items.find((item) => item.requestId === expected.id)!;
      expect({ method: entry.method, route: entry.route, status: entry.status }, expected.id).toEqual({ method: expected.method, route: expected.route, status: expected.status });
      expect(entry.accountId).toBe(String(customer.accountId));
      expect(entry.durationMs).toBeGreaterThan(0);
      expect(entry.clientIp).toBe('127.0.0.1');
    }
    const byId = (id: string) => items.find((item) => item.requestId === id)!;
    expect(byId('mix-order').credential).toEqual({ kind: 'api_key', label: keyPrefix });
    expect(byId('mix-key').credential.kind).toBe('login_token');
    expect(byId('mix-order').idempotencyKey).toBe('mix-order-key');
    expect(byId('mix-order').path).toBe('/v2/orders');
    expect(JSON.parse(byId('mix-order').request.body)).toMatchObject({ items: [{ cheeseId: String(cheeseId), quantity_kg: 1 }] });
    expect(JSON.parse(byId('mix-order').response.body)).toMatchObject({ status: expect.any(String) });
    expect(byId('mix-missing').response.body).toContain('not_found');
    // The log's own reads are not recorded (a tail would wake on its own polls).
    expect(items.some((item) => String(item.route).startsWith('/v2/request-logs'))).toBe(false);
  });

  it('keeps no secret or password anywhere: not in the table, not in the answers', async () => {
    await listed(sent.map((s) => s.id), apiKey(key));
    const rows = JSON.stringify(await t.database.db.selectFrom('request_logs').selectAll().execute());
    const answers = (await logs('?limit=100', staff)).text;
    for (const secret of [key, loginToken, webhookSecret, customer.password, newPassword, key.slice(16), webhookSecret.slice(6)]) {
      expect(rows.includes(secret), `a secret (${secret.slice(0, 10)}…) is in the table`).toBe(false);
      expect(answers.includes(secret), `a secret (${secret.slice(0, 10)}…) is in an answer`).toBe(false);
    }
    const items = (await logs('?limit=100', staff)).body.items as Array<Record<string, any>>;
    const password = items.find((item) => item.requestId === 'mix-password')!;
    expect(JSON.parse(password.request.body)).toEqual({ username: customer.username, email: `${customer.username}@example.com`, password: '[redacted]', currentPassword: '[redacted]' });
    expect(password.request.headers.authorization).toBe('[redacted]');
    const query = items.find((item) => item.requestId === 'mix-query')!;
    expect(query.query).toContain('token=[redacted]');
    expect(query.query).toContain('note=sk_test_[redacted]');
    expect(JSON.parse(items.find((item) => item.requestId === 'mix-key')!.response.body).key).toBe('[redacted]');
    expect(JSON.parse(items.find((item) => item.requestId === 'mix-webhook')!.response.body).secret).toBe('[redacted]');
  });

  it('filters by status class or exact status, method, path prefix, credential, Idempotency-Key and request id', async () => {
    await listed(sent.map((s) => s.id), apiKey(key));
    const ids = async (query: string) => ((await logs(`${query}&limit=100`, apiKey(key))).body.items as Array<{ requestId: string }>).map((item) => item.requestId).filter((id) => id.startsWith('mix-')).sort();
    const statusOf = (id: string) => sent.find((s) => s.id === id)!.status;
    expect(await ids('?status=4xx')).toEqual(sent.filter((s) => s.status >= 400 && s.status < 500).map((s) => s.id).sort());
    expect(await ids('?status=404')).toEqual(['mix-missing', 'mix-unrouted']);
    expect(await ids('?status=2xx')).toEqual(sent.filter((s) => statusOf(s.id) < 300).map((s) => s.id).sort());
    expect(await ids('?method=PUT')).toEqual(['mix-password']);
    expect(await ids('?path=/v2/orders')).toEqual(['mix-invalid', 'mix-missing', 'mix-order']);
    expect(await ids(`?credential=${keyPrefix}`)).toEqual(sent.filter((s) => !['mix-key', 'mix-password'].includes(s.id)).map((s) => s.id).sort());
    expect(await ids('?credential=login_token')).toEqual(['mix-key', 'mix-password']);
    expect(await ids('?idempotency_key=mix-order-key')).toEqual(['mix-order']);
    expect(await ids('?request_id=mix-webhook')).toEqual(['mix-webhook']);
    expect((await logs('?status=6xx', apiKey(key))).status).toBe(400);
  });

  it("resolves an event's metadata.request_id to its request", async () => {
    await listed(['mix-order'], apiKey(key));
    const events = await t.http.get('/v2/events?type=order.placed&limit=20', { headers: apiKey(key) });
    const placed = (events.body.items as Array<{ metadata: { request_id: string | null } }>).find((event) => event.metadata.request_id === 'mix-order');
    expect(placed, events.text).toBeDefined();
    const entry = await t.http.get(`/v2/request-logs/${placed!.metadata.request_id}`, { headers: apiKey(key) });
    expect(entry.status).toBe(200);
    expect(entry.body).toMatchObject({ requestId: 'mix-order', method: 'POST', route: '/v2/orders', status: 201, idempotencyKey: 'mix-order-key' });
  });

  it("shows a customer its own account's requests only; staff every account's; needs read:logs", async () => {
    await listed(sent.map((s) => s.id), apiKey(key));
    const other = apiKey(await t.key(['read:logs', 'read:cheeses'], 'customer'));
    expect(((await logs('?limit=100', other)).body.items as Array<{ requestId: string }>).filter((item) => item.requestId.startsWith('mix-'))).toEqual([]);
    expect((await t.http.get('/v2/request-logs/mix-order', { headers: other })).status).toBe(404);
    expect((await t.http.get('/v2/request-logs/mix-order', { headers: staff })).body.accountId).toBe(String(customer.accountId));
    const noScope = await logs('', apiKey(await t.key(['read:cheeses'], 'customer')));
    expect(noScope.status).toBe(403);
    expect(noScope.body.message).toContain('read:logs');
  });

  it('pages newest first with a cursor, each entry once', async () => {
    await listed(sent.map((s) => s.id), apiKey(key));
    const seen: string[] = [];
    let query = '?limit=3&path=/v2/';
    for (let i = 0; i < 20; i++) {
      const page = await logs(query, apiKey(key));
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((item: { requestId: string }) => item.requestId));
      if (!page.body.hasMore) break;
      query = `?limit=3&path=/v2/&cursor=${encodeURIComponent(page.body.nextCursor)}`;
    }
    const mine = seen.filter((id) => id.startsWith('mix-'));
    expect(new Set(mine).size).toBe(mine.length);
    expect(mine.sort()).toEqual(sent.map((s) => s.id).sort());
    // A cursor reused with another filter is refused.
    const first = await logs('?limit=1', apiKey(key));
    expect((await logs(`?limit=1&method=GET&cursor=${encodeURIComponent(first.body.nextCursor)}`, apiKey(key))).status).toBe(400);
  });
});

describe('tailing (after, wait)', () => {
  it('holds a poll until an entry its filters list is recorded, and goes on from nextAfter', async () => {
    const key = await t.key(['read:logs', 'read:cheeses', 'read:orders'], 'customer');
    const start = await logs('?after=now', apiKey(key));
    expect(start.status).toBe(200);
    expect(start.body.items).toEqual([]);
    const held = logs(`?after=${encodeURIComponent(start.body.nextAfter)}&wait=20&status=404`, apiKey(key));
    // Lets the poll reach the server and be held.
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A 200 is recorded but does not answer a poll for 404s; the 404 does, long before the wait ends.
    expect((await t.http.get('/v2/cheeses', { headers: { ...apiKey(key), 'x-request-id': 'tail-ok' } })).status).toBe(200);
    expect((await t.http.get('/v2/orders/88888888', { headers: { ...apiKey(key), 'x-request-id': 'tail-404' } })).status).toBe(404);
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body.items.map((item: { requestId: string; status: number }) => [item.requestId, item.status])).toEqual([['tail-404', 404]]);
    // From where that page ended: the 200 came before it, so nothing is left.
    const next = await logs(`?after=${encodeURIComponent(answer.body.nextAfter)}&status=404`, apiKey(key));
    expect(next.body.items).toEqual([]);
    // A request id is a place to go on from too.
    const fromId = await logs('?after=tail-ok', apiKey(key));
    expect(fromId.body.items.map((item: { requestId: string }) => item.requestId)).toEqual(['tail-404']);
    expect((await logs('?wait=5', apiKey(key))).status).toBe(400);
    expect((await logs('?after=pos_forged.tag', apiKey(key))).status).toBe(400);
  });
});

describe('bodies, switching off, retention', () => {
  it('REQUEST_LOG_BODIES=errors keeps the bodies of 4xx and 5xx answers only; none keeps none', async () => {
    for (const bodies of ['errors', 'none'] as const) {
      const app = await createTestApp({ config: { requestLog: { enabled: true, bodies, retentionDays: 7 } } });
      try {
        const key = apiKey(await app.key(['read:logs', 'read:cheeses'], 'customer'));
        await app.http.get('/v2/cheeses', { headers: { ...key, 'x-request-id': 'body-ok' } });
        await app.http.get('/v2/cheeses/99999999', { headers: { ...key, 'x-request-id': 'body-404' } });
        let items: Array<Record<string, any>> = [];
        await expect.poll(async () => {
          await app.app.modules.requestLog.provides.flush();
          items = (await app.http.get('/v2/request-logs', { headers: key })).body.items;
          return items.length;
        }).toBe(2);
        const byId = (id: string) => items.find((item) => item.requestId === id)!;
        expect(byId('body-ok').response.body).toBeNull();
        if (bodies === 'errors') expect(byId('body-404').response.body).toContain('not_found');
        else expect(byId('body-404').response.body).toBeNull();
      } finally {
        await app.close();
      }
    }
  });

  it('REQUEST_LOG=off records nothing', async () => {
    const app = await createTestApp({ config: { requestLog: { enabled: false, bodies: 'all', retentionDays: 7 } } });
    try {
      const key = apiKey(await app.key(['read:logs', 'read:cheeses'], 'customer'));
      await app.http.get('/v2/cheeses', { headers: key });
      await app.app.modules.requestLog.provides.flush();
      expect((await app.http.get('/v2/request-logs', { headers: key })).body.items).toEqual([]);
      expect(await app.database.db.selectFrom('request_logs').selectAll().execute()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('the hourly job deletes entries older than REQUEST_LOG_RETENTION_DAYS', async () => {
    const key = apiKey(await t.key(['read:logs', 'read:cheeses'], 'customer'));
    await t.http.get('/v2/cheeses', { headers: { ...key, 'x-request-id': 'old-entry' } });
    await listed(['old-entry'], key);
    expect(await t.runJob('request-log-pruning', new Date(Date.now() + 6 * 86_400_000))).toBe(0);
    expect(await t.runJob('request-log-pruning', new Date(Date.now() + 8 * 86_400_000))).toBeGreaterThan(0);
    expect((await t.http.get('/v2/request-logs/old-entry', { headers: key })).status).toBe(404);
  });
});
