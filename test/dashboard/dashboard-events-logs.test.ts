import { HtmlValidate } from 'html-validate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer, type Page } from '../helpers/dashboard.js';
import { bearer } from '../helpers/http.js';

/** The dashboard's Events (the event log) and Logs (the request log) pages (issue 31, pages 1 and 2), over real HTTP. */
let t: TestApp;
let staffKey: string;
beforeAll(async () => {
  t = await createTestApp();
  staffKey = await t.key(['admin']);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const validator = new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'form-dup-name': ['error', { shared: ['radio', 'checkbox', 'button', 'reset', 'submit'] }] } });
async function expectValidHtml(page: Page): Promise<void> {
  const report = await validator.validateString(page.html);
  expect(report.results.flatMap((result) => result.messages.map((m) => `${m.ruleId} (line ${m.line}): ${m.message}`))).toEqual([]);
}

/** A customer signed in on the dashboard, with an API key of its own for /v2. */
async function customer() {
  const account = await signUpCustomer(t);
  const browser = new FormBrowser(t.http.baseUrl);
  expect((await browser.signIn(account.username, account.password)).status).toBe(303);
  const { key } = await t.app.modules.identity.provides.apiKeys.create({ accountId: account.accountId, role: 'customer' }, { scopes: ['read:cheeses', 'read:orders', 'write:orders'] }, null);
  return { account, browser, key };
}

async function staff() {
  const browser = new FormBrowser(t.http.baseUrl);
  expect((await browser.signIn('admin', 'test-staff-password')).status).toBe(303);
  return browser;
}

let cheeses = 0;
/** An order placed through /v2 with this key: its id, the request id and the event's id. */
async function placeOrder(key: string, idempotencyKey = `idem-${Math.random().toString(36).slice(2)}`) {
  const cheese = await t.http.post('/v2/cheeses', { headers: bearer(staffKey), json: { name: `Logs Tomme ${++cheeses} ${process.pid}`, pricePerKg: 20, stockQuantityKg: 50 } });
  expect(cheese.status).toBe(201);
  const order = await t.http.post('/v2/orders', {
    headers: { ...bearer(key), 'idempotency-key': idempotencyKey },
    json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Test Street', city: 'Lyon', country: 'FR' } } },
  });
  expect(order.status, order.text).toBe(201);
  await t.app.modules.requestLog.provides.flush();
  const event = await t.database.db.selectFrom('outbox').select('event_id').where('aggregate_type', '=', 'order').where('aggregate_id', '=', String(order.body.id)).where('type', '=', 'order.placed').executeTakeFirstOrThrow();
  return { id: order.body.id as number, requestId: order.headers.get('x-request-id')!, eventId: event.event_id, idempotencyKey };
}

const unescaped = (html: string) => html.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>');
const liveRegion = (html: string) => /<section aria-label="Live"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
const tailOf = (html: string) => unescaped(/hx-get="([^"]+)"/.exec(html)?.[1] ?? '');

describe('Events: the event log', () => {
  it('lists the account\'s events newest first with filters in the URL, a Live region with a tail and a Refresh link, and links to Event kinds', async () => {
    const { browser, key } = await customer();
    const first = await placeOrder(key);
    const second = await placeOrder(key);
    // On PostgreSQL the log lists an event once no older transaction on the server is open (other
    // test files' too): the page is asked again until the second order's event is visible.
    let page = await browser.get('/dashboard/events');
    await expect
      .poll(async () => {
        page = await browser.get('/dashboard/events');
        return liveRegion(page.html).includes(second.eventId) && liveRegion(page.html).includes(first.eventId);
      }, { timeout: 10_000, interval: 100 })
      .toBe(true);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/<a href="\/dashboard\/events"[^>]*>Events<\/a><\/li>\s*<li><a href="\/dashboard\/logs">Logs<\/a>/);
    expect(page.html).toContain('href="/dashboard/events/kinds">Event kinds</a>');
    expect(page.html).toContain('<label for="type">Type</label>');
    const live = liveRegion(page.html);
    expect(live).toContain(`/dashboard/events/${second.eventId}`);
    expect(live.indexOf(second.eventId)).toBeLessThan(live.indexOf(first.eventId));
    expect(live).toContain('>Refresh</a>');
    expect(tailOf(live)).toMatch(/^\/dashboard\/events\/tail\?after=evt_/);
    await expectValidHtml(page);

    const family = await browser.get('/dashboard/events?type=order.*');
    expect(family.html).toContain(second.eventId);
    expect(family.html).toContain('value="order.*"');
    expect((await browser.get('/dashboard/events?type=cheese.*')).html).not.toContain(second.eventId);
    const byObject = await browser.get(`/dashboard/events?objectType=order&objectId=${first.id}`);
    expect(byObject.html).toContain(first.eventId);
    expect(byObject.html).not.toContain(second.eventId);
    const today = new Date().toISOString().slice(0, 10);
    expect((await browser.get(`/dashboard/events?from=${today}&to=${today}`)).html).toContain(second.eventId);
    expect((await browser.get('/dashboard/events?to=2000-01-01')).html).not.toContain(second.eventId);
    expect((await browser.get('/dashboard/events?type=nothing.such')).status).toBe(400);

    const kinds = await browser.get('/dashboard/events/kinds');
    expect(kinds.status).toBe(200);
    expect(kinds.html).toContain('id="event-order-placed"');
  });

  it('the tail fragment answers the events after its place, newest first, with the next poller', async () => {
    const { browser, key } = await customer();
    const page = await browser.get('/dashboard/events?type=order.*');
    const tail = tailOf(liveRegion(page.html));
    const pending = browser.get(tail);
    const order = await placeOrder(key);
    const fragment = await pending;
    expect(fragment.status).toBe(200);
    expect(fragment.html).toContain(`/dashboard/events/${order.eventId}`);
    const next = tailOf(fragment.html);
    expect(next).toContain('type=order.*');
    expect(next).not.toBe(tail);
    // Polling (after the long poll failed): answered at once, the next poller waits 2 s.
    const polled = await browser.get(`${next}&wait=0`);
    expect(polled.html).toContain('hx-trigger="load delay:2s, tail-retry"');
    expect(polled.html).not.toContain(order.eventId);
  });

  it('an event\'s page: payload with Copy, the request that caused it, each webhook\'s delivery, and Resend (303) queues a delivery', async () => {
    const { browser, key, account } = await customer();
    await browser.get('/dashboard/webhooks/new');
    const created = await browser.post('/dashboard/webhooks', { url: 'http://127.0.0.1:9/hook', events: 'order.placed' });
    expect(created.status, /<main[\s\S]*<\/main>/.exec(created.html)?.[0]).toBe(303);
    const webhookId = Number(/\/dashboard\/webhooks\/(\d+)/.exec(created.location ?? '')?.[1]);
    const order = await placeOrder(key);
    const page = await browser.get(`/dashboard/events/${order.eventId}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-copy="payload"');
    expect(page.html).toContain('<pre class="payload" id="payload"');
    expect(page.html).toContain(`&quot;id&quot;: &quot;${order.eventId}&quot;`);
    expect(page.html).toContain(`href="/dashboard/logs/${order.requestId}"`);
    expect(page.html).toContain('http://127.0.0.1:9/hook');
    expect(page.html).toContain('>Resend</button>');
    await expectValidHtml(page);

    const deliveries = () => t.database.db.selectFrom('webhook_deliveries').select(['state']).where('webhook_id', '=', webhookId).where('event_id', '=', order.eventId).execute();
    // Without the dispatcher running, the fan-out has not made the delivery yet: Resend makes it.
    expect(await deliveries()).toEqual([]);
    const resent = await browser.post(`/dashboard/events/${order.eventId}/resend`, { webhook: String(webhookId) });
    expect(resent.status, /<main[\s\S]*<\/main>/.exec(resent.html)?.[0]).toBe(303);
    expect(resent.location).toBe(`/dashboard/events/${order.eventId}?resent=queued&webhook=${webhookId}`);
    expect(await deliveries()).toEqual([{ state: 'pending' }]);
    const after = await browser.get(resent.location!);
    expect(after.html).toContain('The event is queued for');
    expect(after.html).toContain('>Pending</span>');
    // Again while it is pending: left to its schedule, no second delivery.
    expect((await browser.post(`/dashboard/events/${order.eventId}/resend`, { webhook: String(webhookId) })).location).toContain('resent=pending');
    expect(await deliveries()).toHaveLength(1);
    // A settled delivery started again: test/webhooks/event-resend.test.ts (webhooks' own table).
    // Another webhook of the account that does not receive order.placed is refused (409): nothing is queued.
    await browser.get('/dashboard/webhooks/new');
    const other = await browser.post('/dashboard/webhooks', { url: 'http://127.0.0.1:9/other', events: 'order.shipped' });
    const otherId = Number(/\/dashboard\/webhooks\/(\d+)/.exec(other.location ?? '')?.[1]);
    await browser.get(`/dashboard/events/${order.eventId}`);
    expect((await browser.post(`/dashboard/events/${order.eventId}/resend`, { webhook: String(otherId) })).status).toBe(409);
    // Without the form's token: refused.
    expect((await browser.post(`/dashboard/events/${order.eventId}/resend`, { webhook: String(webhookId) }, { csrf: null })).status).toBe(403);
    expect(account.accountId).toBeGreaterThan(0);
  });
});

describe('Logs: the request log', () => {
  it('lists the account\'s requests with status, method, path, duration, credential and time; every filter in the URL', async () => {
    const { browser, key } = await customer();
    const order = await placeOrder(key, 'logs-filter-key');
    const missing = await t.http.get('/v2/orders/999999999', { headers: bearer(key) });
    expect(missing.status).toBe(404);
    await t.app.modules.requestLog.provides.flush();
    const page = await browser.get('/dashboard/logs');
    expect(page.status).toBe(200);
    const live = liveRegion(page.html);
    expect(live).toContain(`href="/dashboard/logs/${order.requestId}"`);
    expect(live).toContain('badge-ok">201</span>');
    expect(live).toContain('badge-warn">404</span>');
    expect(live).toContain('<td>POST</td>');
    expect(live).toContain(key.slice(0, 16));
    expect(live).toMatch(/<td>[\d.]+ ms<\/td>/);
    expect(live).toContain('<time datetime=');
    expect(live).toContain('>Refresh</a>');
    expect(tailOf(live)).toMatch(/^\/dashboard\/logs\/tail\?after=pos_/);
    for (const label of ['Status', 'Method', 'Path']) expect(page.html).toContain(`>${label}</label>`);
    await expectValidHtml(page);

    const has = async (query: string) => (await browser.get(`/dashboard/logs?${query}`)).html.includes(`/dashboard/logs/${order.requestId}"`);
    expect(await has('status=2xx')).toBe(true);
    expect(await has('status=201')).toBe(true);
    expect(await has('status=4xx')).toBe(false);
    expect(await has('method=POST')).toBe(true);
    expect(await has('method=GET')).toBe(false);
    expect(await has('path=%2Fv2%2Forders')).toBe(true);
    expect(await has('path=%2Fv2%2Fcheeses')).toBe(false);
    expect(await has(`credential=${key.slice(0, 16)}`)).toBe(true);
    expect(await has('idempotencyKey=logs-filter-key')).toBe(true);
    expect(await has('idempotencyKey=another')).toBe(false);
    expect(await has(`requestId=${order.requestId}`)).toBe(true);
    expect((await browser.get('/dashboard/logs?status=abc')).status).toBe(400);
  });

  it('the tail fragment answers the requests made after its place', async () => {
    const { browser, key } = await customer();
    const tail = tailOf(liveRegion((await browser.get('/dashboard/logs')).html));
    const pending = browser.get(tail);
    const read = await t.http.get('/v2/orders', { headers: bearer(key) });
    expect(read.status).toBe(200);
    await t.app.modules.requestLog.provides.flush();
    const fragment = await pending;
    expect(fragment.html).toContain(`/dashboard/logs/${read.headers.get('x-request-id')}`);
  });

  it('a request\'s page: headers and bodies as kept, the events it caused, and Copy as curl without any secret', async () => {
    const { browser, key } = await customer();
    const order = await placeOrder(key, 'curl-key');
    // The events it caused come from the event log, which on PostgreSQL lists an event once no older transaction is open.
    let page = await browser.get(`/dashboard/logs/${order.requestId}`);
    await expect
      .poll(async () => {
        page = await browser.get(`/dashboard/logs/${order.requestId}`);
        return page.html.includes(`/dashboard/events/${order.eventId}`);
      }, { timeout: 10_000, interval: 100 })
      .toBe(true);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Request headers');
    expect(page.html).toContain('Answer headers');
    expect(page.html).toContain('&quot;quantity_kg&quot;: 1');
    expect(page.html).toContain(`/dashboard/events/${order.eventId}`);
    expect(page.html).toContain('>Copy as curl</button>');
    const curl = unescaped(/<pre class="payload" id="curl" tabindex="0"><code>([\s\S]*?)<\/code><\/pre>/.exec(page.html)?.[1] ?? '');
    expect(curl).toContain(`curl -X POST '${t.http.baseUrl}/v2/orders'`);
    expect(curl).toContain('-H "Authorization: Bearer $FROMAGERIE_API_KEY"');
    expect(curl).toContain("-H 'idempotency-key: curl-key'");
    expect(curl).toContain('--data-raw \'{"items"');
    expect(curl).not.toContain(key);
    expect(curl).not.toContain(key.slice(0, 16));
    expect(page.html).not.toContain(key);
    await expectValidHtml(page);

    // A credential under a custom header's name (X-Auth-Token, a signature) is kept as [redacted] and left out of the command.
    const read = await t.http.get('/v2/orders', { headers: { ...bearer(key), 'x-auth-token': 'tok-4f1b9c-not-for-the-log', 'x-hub-signature-256': 'sha256=9c1e5d-not-for-the-log' } });
    expect(read.status).toBe(200);
    await t.app.modules.requestLog.provides.flush();
    const readPage = await browser.get(`/dashboard/logs/${read.headers.get('x-request-id')}`);
    expect(readPage.status).toBe(200);
    expect(readPage.html).not.toContain('not-for-the-log');
    expect(readPage.html).toContain('x-auth-token');
  });
});

describe('who sees what', () => {
  it('a customer cannot see another account\'s event or request (404); staff can', async () => {
    const alice = await customer();
    const bob = await customer();
    const order = await placeOrder(alice.key);
    expect((await bob.browser.get(`/dashboard/events/${order.eventId}`)).status).toBe(404);
    expect((await bob.browser.get(`/dashboard/logs/${order.requestId}`)).status).toBe(404);
    expect((await bob.browser.get('/dashboard/events')).html).not.toContain(order.eventId);
    expect((await bob.browser.get('/dashboard/logs')).html).not.toContain(order.requestId);
    expect((await bob.browser.post(`/dashboard/events/${order.eventId}/resend`, { webhook: '1' })).status).toBe(404);
    const admin = await staff();
    expect((await admin.get(`/dashboard/events/${order.eventId}`)).status).toBe(200);
    expect((await admin.get(`/dashboard/logs/${order.requestId}`)).status).toBe(200);
    expect((await admin.get('/dashboard/events')).html).toContain(order.eventId);
    expect((await admin.get('/dashboard/logs')).html).toContain(order.requestId);
    expect((await admin.get('/dashboard/events/evt_0123')).status).toBe(400);
  });
});
