import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/kernel/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer, type Page } from '../helpers/dashboard.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * The dashboard's order page and "Create test order" (issue 31, page 3) and the overview's
 * pictures (page 4), over real HTTP on the configured dialect: the orders service places what
 * the form sends as POST /v2/orders would; the overview's numbers come from the request log and
 * the attempt log, read at the app's clock (a ManualClock here).
 */
let t: TestApp;
let live: TestApp;
let clocked: TestApp;
let receiver: Receiver;
let staffKey: string;
const clock = new ManualClock('2026-11-28T08:00:00.000Z');

beforeAll(async () => {
  [t, live, clocked, receiver] = await Promise.all([createTestApp({ workers: true }), createTestApp({ env: 'production' }), createTestApp({ config: { clock } }), new Receiver().start()]);
  staffKey = await t.key(['admin']);
}, 60_000);
afterAll(async () => {
  await Promise.all([t?.close(), live?.close(), clocked?.close(), receiver?.close()]);
});

async function signedIn(app: TestApp = t) {
  const customer = await signUpCustomer(app);
  const browser = new FormBrowser(app.http.baseUrl);
  expect((await browser.signIn(customer.username, customer.password)).status).toBe(303);
  return { customer, browser };
}

async function staffBrowser(app: TestApp = t) {
  const browser = new FormBrowser(app.http.baseUrl);
  expect((await browser.signIn(app.config.adminUsername, app.config.adminPassword!)).status).toBe(303);
  return browser;
}

let cheeses = 0;
async function cheese(app: TestApp, key: string, stockKg = 50): Promise<number> {
  const made = await app.http.post('/v2/cheeses', { headers: bearer(key), json: { name: `Order Page Tomme ${++cheeses} ${process.pid}`, pricePerKg: 20, stockQuantityKg: stockKg } });
  expect(made.status, made.text).toBe(201);
  return made.body.id as number;
}

const stockOf = async (app: TestApp, id: number) => Number((await app.database.db.selectFrom('cheeses').select('stock_grams').where('id', '=', id).executeTakeFirstOrThrow()).stock_grams);
const ordersOf = async (app: TestApp, accountId: number) => (await app.database.db.selectFrom('orders').select('id').where('account_id', '=', accountId).execute()).map((row) => Number(row.id));
const eventsOf = (app: TestApp, id: number) => app.database.db.selectFrom('outbox').select('type').where('aggregate_type', '=', 'order').where('aggregate_id', '=', String(id)).orderBy('id').execute();
/** The text of the page without its tags, spaces collapsed. */
const textOf = (page: Page) => page.html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

/** Places a test order through the form; answers the new order's id. */
async function createTestOrder(browser: FormBrowser, lines: { cheese: string; kg: string }[], method = 'standard'): Promise<Page> {
  await browser.get('/dashboard/orders/new');
  const fields = Object.fromEntries(lines.flatMap((line, i) => [[`cheese${i + 1}`, line.cheese], [`kg${i + 1}`, line.kg]]));
  return browser.post('/dashboard/orders/new', { ...fields, method });
}

describe('Create test order', () => {
  it('is the Orders page\'s primary action; the form places the order as POST /v2/orders does: stock reserved, order.placed, 303 to its page', async () => {
    const { customer, browser } = await signedIn();
    const id = await cheese(t, staffKey);
    const list = await browser.get('/dashboard/orders');
    expect(list.html).toMatch(/<div class="page-head">\s*<h1>Orders<\/h1>\s*<form method="get" action="\/dashboard\/orders\/new" class="inline">\s*<button type="submit">Create test order<\/button>/);
    const form = await browser.get('/dashboard/orders/new');
    expect(form.status).toBe(200);
    expect(form.html).toContain(`<option value="${id}">Order Page Tomme ${cheeses} ${process.pid} (20.00 USD/kg)</option>`);
    const placed = await createTestOrder(browser, [{ cheese: String(id), kg: '1.5' }, { cheese: '', kg: '' }, { cheese: '', kg: '' }], 'express_chilled');
    expect(placed.status, placed.html).toBe(303);
    const [orderId] = await ordersOf(t, customer.accountId);
    expect(placed.location).toBe(`/dashboard/orders/${orderId}`);
    expect(await stockOf(t, id)).toBe(48_500);
    expect((await eventsOf(t, orderId!)).map((e) => e.type)).toEqual(['order.placed']);
    const page = await browser.get(placed.location!);
    expect(page.status).toBe(200);
    const text = textOf(page);
    expect(text).toContain(`Order #${orderId}`);
    expect(text).toContain('1.5 kg');
    expect(text).toContain('Subtotal 30.00 USD');
    expect(text).toContain('Express chilled: 25.00 USD');
    expect(text).toContain('Total 55.00 USD');
    expect(text).toContain('Authorised (not captured yet)');
  });

  it('shows the form again with what is wrong and places nothing: a weight off the 0.05 kg steps, no number, no line, not enough stock', async () => {
    const { customer, browser } = await signedIn();
    const id = await cheese(t, staffKey, 2);
    const cases: [{ cheese: string; kg: string }[], number, string][] = [
      [[{ cheese: String(id), kg: '0.07' }], 422, 'Line 1&#39;s weight must be a multiple of 0.05 kg.'],
      [[{ cheese: String(id), kg: '200' }], 422, 'Line 1&#39;s weight must be between 0.1 and 100 kg.'],
      [[{ cheese: '', kg: '' }, { cheese: String(id), kg: 'lots' }], 422, 'Line 2 needs a weight in kilograms'],
      [[{ cheese: '', kg: '1' }], 422, 'Line 1 has a weight but no cheese.'],
      [[{ cheese: '', kg: '' }], 422, 'Items pick at least one cheese and its weight.'],
      [[{ cheese: '99999999', kg: '1' }], 422, 'The order was not placed'],
      [[{ cheese: String(id), kg: '3' }], 409, 'The order was not placed'],
    ];
    for (const [lines, status, message] of cases) {
      const refused = await createTestOrder(browser, lines);
      expect(refused.status, JSON.stringify(lines)).toBe(status);
      expect(refused.html, JSON.stringify(lines)).toContain(message);
      expect(refused.html).toContain('role="alert"');
      // The form comes back as it was sent.
      if (lines[0]!.kg) expect(refused.html).toContain(`value="${lines[0]!.kg}"`);
    }
    expect(await ordersOf(t, customer.accountId)).toEqual([]);
    expect(await stockOf(t, id)).toBe(2000);
    // Without its CSRF token: 403, nothing placed.
    expect((await browser.post('/dashboard/orders/new', { cheese1: String(id), kg1: '1' }, { csrf: null })).status).toBe(403);
    expect(await ordersOf(t, customer.accountId)).toEqual([]);
  });

  it('does not exist in production: no button, and the form and its action are 404', async () => {
    const { browser } = await signedIn(live);
    const list = await browser.get('/dashboard/orders');
    expect(list.status).toBe(200);
    expect(list.html).not.toContain('Create test order');
    expect((await browser.get('/dashboard/orders/new')).status).toBe(404);
    expect((await browser.post('/dashboard/orders/new', { cheese1: '1', kg1: '1' })).status).toBe(404);
  });
});

describe('the order page', () => {
  it('shows the timeline in order with its times, payment and tracking as the order moves on; Advance there comes back to it', async () => {
    const { customer, browser } = await signedIn();
    const id = await cheese(t, staffKey);
    const placed = await createTestOrder(browser, [{ cheese: String(id), kg: '2' }]);
    const orderId = Number(placed.location!.split('/').pop());
    let page = await browser.get(placed.location!);
    expect(page.html).toContain(`action="/dashboard/orders/${orderId}/advance"`);
    for (const _ of [1, 2]) {
      const advanced = await browser.post(`/dashboard/orders/${orderId}/advance`, { back: `/dashboard/orders/${orderId}` });
      expect(advanced.status).toBe(303);
      expect(advanced.location).toBe(`/dashboard/orders/${orderId}`);
    }
    page = await browser.get(`/dashboard/orders/${orderId}`);
    const timeline = /<ol class="timeline">([\s\S]*?)<\/ol>/.exec(page.html)![1]!;
    const steps = [...timeline.matchAll(/<strong>([^<]+)<\/strong>/g)].map((m) => m[1]);
    expect(steps).toEqual(['Placed', 'Confirmed: payment captured', 'Shipped']);
    expect([...timeline.matchAll(/<time datetime="([^"]+)"/g)]).toHaveLength(3);
    expect(page.html).toContain('<span class="badge badge-info">Shipped</span>');
    const text = textOf(page);
    expect(text).toContain('Payment Captured');
    expect(text).toMatch(/Tracking number FRX-/);
    expect((await eventsOf(t, orderId)).map((e) => e.type)).toEqual(['order.placed', 'order.confirmed', 'order.shipped']);
    // The list links each order to its page.
    expect((await browser.get('/dashboard/orders')).html).toContain(`<a href="/dashboard/orders/${orderId}">#${orderId}</a>`);
    // Another customer: 404, as if it did not exist; staff: the page, with the account.
    const other = await signedIn();
    expect((await other.browser.get(`/dashboard/orders/${orderId}`)).status).toBe(404);
    expect((await other.browser.post(`/dashboard/orders/${orderId}/advance`, { back: `/dashboard/orders/${orderId}` })).status).toBe(404);
    const staff = await staffBrowser();
    const seen = await staff.get(`/dashboard/orders/${orderId}`);
    expect(seen.status).toBe(200);
    expect(textOf(seen)).toContain(`Account ${customer.username}`);
    expect((await browser.get('/dashboard/orders/99999999')).status).toBe(404);
  });

  it('lists the webhook deliveries of the order\'s events with their outcome and a link to the attempt', async () => {
    const { customer, browser } = await signedIn();
    const login = await t.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } });
    const hook = await t.http.post('/v2/webhooks', { headers: bearer(login.body.token as string), json: { url: receiver.url('/order-page'), events: ['order.*'] } });
    expect(hook.status, hook.text).toBe(201);
    const id = await cheese(t, staffKey);
    const placed = await createTestOrder(browser, [{ cheese: String(id), kg: '1' }]);
    const orderId = Number(placed.location!.split('/').pop());
    await receiver.waitFor('/order-page', 1);
    let page = await browser.get(placed.location!);
    for (let i = 0; i < 100 && !page.html.includes('Delivered</span>'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      page = await browser.get(placed.location!);
    }
    const section = /<section aria-labelledby="deliveries-title">([\s\S]*?)<\/section>/.exec(page.html)![1]!;
    expect(section).toContain('<code>order.placed</code>');
    expect(section).toContain('<span class="badge badge-ok">Delivered</span>');
    expect(section).toContain('<span class="badge badge-ok">200</span>');
    expect(section).toMatch(new RegExp(`href="/dashboard/webhooks/${hook.body.id}/deliveries/\\d+"`));
    // Another customer's page of their own order lists none of these deliveries.
    const other = await signedIn();
    const theirs = await createTestOrder(other.browser, [{ cheese: String(id), kg: '1' }]);
    const theirPage = await other.browser.get(theirs.location!);
    expect(theirPage.html).not.toContain(receiver.url('/order-page'));
    expect(orderId).toBeGreaterThan(0);
  });

  it('in production: the page, without Advance', async () => {
    const key = await live.key(['admin']);
    const id = await cheese(live, key);
    const { customer, browser } = await signedIn(live);
    const login = await live.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } });
    const order = await live.http.post('/v2/orders', { headers: bearer(login.body.token as string), json: { items: [{ cheeseId: id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Test Street', city: 'Lyon', country: 'FR' } } } });
    expect(order.status).toBe(201);
    const page = await browser.get(`/dashboard/orders/${order.body.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Placed');
    expect(page.html).not.toContain('Advance');
  });
});

describe('the overview\'s pictures', () => {
  /** The data table's row of an hour: the counts of 2xx, 3xx, 4xx, 5xx and all. */
  const hourRow = (page: Page, iso: string) => {
    const row = new RegExp(`<time datetime="${iso}">[^<]+</time></th>((?:<td>\\d+</td>)+)`).exec(page.html);
    return row ? [...row[1]!.matchAll(/<td>(\d+)<\/td>/g)].map((m) => Number(m[1])) : null;
  };

  it('counts requests per hour and status class over the last 24 hours (the account\'s; staff every account\'s) and sums webhook attempts', async () => {
    const alice = await signUpCustomer(clocked);
    const bob = await signUpCustomer(clocked);
    const tokenOf = async (who: { username: string; password: string }) => (await clocked.http.post('/v2/customer/login', { json: { username: who.username, password: who.password } })).body.token as string;
    const requests = async (who: { username: string; password: string }, ok: number, missing: number) => {
      const token = await tokenOf(who);
      for (let i = 0; i < ok; i++) expect((await clocked.http.get('/v2/orders', { headers: bearer(token) })).status).toBe(200);
      for (let i = 0; i < missing; i++) expect((await clocked.http.get('/v2/orders/99999999', { headers: bearer(token) })).status).toBe(404);
    };
    // Outside the window (over 24 hours before the page is read).
    await requests(alice, 2, 0);
    clock.set('2026-11-28T12:15:00.000Z');
    await requests(alice, 3, 1);
    await requests(bob, 1, 0);
    clock.set('2026-11-29T09:40:00.000Z');
    await requests(alice, 1, 1);
    // Two tests of alice's webhooks: one delivered, one refused (500).
    receiver.on('/overview-bad', () => ({ status: 500 }));
    const token = await tokenOf(alice);
    for (const path of ['/overview-ok', '/overview-bad']) {
      const hook = await clocked.http.post('/v2/webhooks', { headers: bearer(token), json: { url: receiver.url(path), events: ['order.placed'] } });
      expect(hook.status, hook.text).toBe(201);
      expect((await clocked.http.post(`/v2/webhooks/${hook.body.id}/test`, { headers: bearer(token) })).status).toBe(200);
    }
    await clocked.app.modules.requestLog.provides.flush();
    clock.set('2026-11-29T10:05:00.000Z');

    const browser = new FormBrowser(clocked.http.baseUrl);
    expect((await browser.signIn(alice.username, alice.password)).status).toBe(303);
    const page = await browser.get('/dashboard');
    expect(page.status).toBe(200);
    // 24 rows, 11:00 yesterday to 10:00 today (UTC); the 08:00 requests are outside.
    expect([...page.html.matchAll(/<th scope="row"><time datetime="[^"]+">\d\d:00<\/time><\/th>/g)]).toHaveLength(24);
    expect(hourRow(page, '2026-11-28T11:00:00.000Z')).toEqual([0, 0, 0, 0, 0]);
    expect(hourRow(page, '2026-11-28T12:00:00.000Z')).toEqual([3, 0, 1, 0, 4]);
    // 09:40: two requests, and the two webhook tests (POST /v2/webhooks and /test are requests too).
    expect(hourRow(page, '2026-11-29T09:00:00.000Z')).toEqual([5, 0, 1, 0, 6]);
    expect(hourRow(page, '2026-11-29T10:00:00.000Z')).toEqual([0, 0, 0, 0, 0]);
    expect(page.html).toContain('<p id="traffic-summary">Requests per hour, last 24 hours: 10 in all (8 2xx, 0 3xx, 2 4xx, 0 5xx); busiest hour 09:00 UTC with 6.</p>');
    expect(page.html).toMatch(/<svg class="chart" role="img" aria-labelledby="traffic-summary" viewBox="0 0 720 200"/);
    expect(page.html).not.toMatch(/\sstyle=/);
    // Webhook attempts: 1 of 2 delivered; the failure listed with a link to its attempt.
    expect(page.html).toContain('Webhook deliveries, last 24 hours: 50.0% of 2 attempts delivered');
    expect(page.html).toMatch(/<svg class="chart meter" role="img" aria-labelledby="delivery-summary"/);
    expect(page.html).toMatch(/<a href="\/dashboard\/webhooks\/\d+\/deliveries\/\d+"><code>webhook.test<\/code> to webhook \d+<\/a>: 500/);

    // Staff: every account's requests.
    const staff = await staffBrowser(clocked);
    const all = await staff.get('/dashboard');
    expect(hourRow(all, '2026-11-28T12:00:00.000Z')).toEqual([4, 0, 1, 0, 5]);
    // Bob: his own only, and no attempts.
    const bobs = new FormBrowser(clocked.http.baseUrl);
    expect((await bobs.signIn(bob.username, bob.password)).status).toBe(303);
    const his = await bobs.get('/dashboard');
    expect(hourRow(his, '2026-11-28T12:00:00.000Z')).toEqual([1, 0, 0, 0, 1]);
    expect(his.html).toContain('Webhook deliveries, last 24 hours: no attempt was made.');
    expect(his.html).toContain('No failed delivery.');
  });
});
