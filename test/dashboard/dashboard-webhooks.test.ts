import { HtmlValidate } from 'html-validate';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { JumpingClock } from '../helpers/clock.js';
import { bearer } from '../helpers/http.js';
import { FormBrowser, signUpCustomer, type Page } from '../helpers/dashboard.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * The webhooks pages of the dashboard (issue 19, pages 3 to 5): add (the secret shown once),
 * test, rotate, enable and disable, delete; the attempt log with its filters in the URL; the
 * dead letter queue and its replays, which the API's attempt log shows. Real HTTP, a real
 * loopback receiver, the database looked at after each refusal.
 */
let t: TestApp;
let receiver: Receiver;
let seq = 0;
const clock = new JumpingClock();
beforeAll(async () => {
  // A failed attempt's next one is a day away: a delivery waiting between two attempts stays so.
  // The pages' own events are test events, one attempt each, which no schedule touches.
  const webhooks = { retryScheduleS: [0, 86_400], timeoutMs: 2000, retentionDays: 30, concurrency: 16, endpointConcurrency: 4, accountConcurrency: 4, pollMs: 200 };
  t = await createTestApp({ workers: true, config: { clock, webhooks } });
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

// As dashboard-pages.test.ts: the recommended rules, but for the layout's `<!doctype html>` and checkbox groups sharing a name.
const validator = new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'doctype-style': 'off', 'form-dup-name': ['error', { shared: ['radio', 'checkbox', 'button', 'reset', 'submit'] }] } });
const SECRET = /<code id="revealed-secret">(whsec_[A-Za-z0-9+/=]+)<\/code>/;
const CSP = "default-src 'self';script-src 'self';style-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none';object-src 'none'";

/** A browser that keeps every response it got, headers and body, to count where a secret appeared. */
class RecordingBrowser extends FormBrowser {
  readonly seen: string[] = [];
  override async request(method: string, path: string, body?: URLSearchParams, headers: Record<string, string> = {}): Promise<Page> {
    const page = await super.request(method, path, body, headers);
    this.seen.push(`${JSON.stringify([...page.headers])}\n${page.html}`);
    return page;
  }
}

async function signedIn() {
  const customer = await signUpCustomer(t);
  const browser = new RecordingBrowser(t.http.baseUrl);
  await browser.signIn(customer.username, customer.password);
  const token = (await t.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } })).body.token as string;
  return { customer, browser, api: bearer(token) };
}

async function staffBrowser() {
  const browser = new RecordingBrowser(t.http.baseUrl);
  await browser.signIn('admin', 'test-staff-password');
  return browser;
}

/** Adds a webhook through the form; answers its id and the secret its page showed. */
async function addWebhook(browser: FormBrowser, path: string, fields: Record<string, string | string[]> = {}) {
  await browser.get('/dashboard/webhooks/new');
  const created = await browser.post('/dashboard/webhooks', { url: receiver.url(path), events: ['order.placed', 'order.shipped'], ...fields });
  expect(created.status, created.html).toBe(303);
  const id = Number(/^\/dashboard\/webhooks\/(\d+)$/.exec(created.location!)?.[1]);
  const page = await browser.get(created.location!);
  return { id, page, secret: SECRET.exec(page.html)?.[1] };
}

/** Sends a test event from the webhook's page; answers the page the redirect leads to. */
async function sendTest(browser: FormBrowser, id: number): Promise<Page> {
  await browser.get(`/dashboard/webhooks/${id}`);
  const sent = await browser.post(`/dashboard/webhooks/${id}/test`);
  expect(sent.status, sent.html).toBe(303);
  expect(sent.location).toMatch(new RegExp(`^/dashboard/webhooks/${id}\\?test=evt_[0-9a-f]{32}$`));
  return browser.get(sent.location!);
}

const deliveries = (id: number) => t.database.db.selectFrom('webhook_deliveries').select(['id', 'event_id', 'state']).where('webhook_id', '=', id).orderBy('id').execute();
const webhookRow = (id: number) => t.database.db.selectFrom('webhooks').select(['id', 'active', 'secret_ciphertext', 'previous_secret_expires_at', 'events', 'description']).where('id', '=', id).executeTakeFirst();
const apiLog = async (id: number, headers: Record<string, string>, query = '') => (await t.http.get(`/v2/webhooks/${id}/deliveries${query}`, { headers })).body.items as { id: number; eventId: string; attempt: number; outcome: string }[];
/** 11 minutes on: every sign-in so far is past the step-up window. */
const stale = () => clock.advance(11 * 60_000);

/** Two dead-lettered test events on a webhook whose receiver answers 500 until `healthy` says otherwise. */
async function withDeadLetters(browser: FormBrowser, count = 2) {
  const path = `/dead-${++seq}`;
  const state = { healthy: false };
  receiver.on(path, () => ({ status: state.healthy ? 200 : 500 }));
  const hook = await addWebhook(browser, path);
  for (let i = 0; i < count; i++) expect((await sendTest(browser, hook.id)).html).toContain('Dead-lettered');
  const rows = await deliveries(hook.id);
  expect(rows.map((row) => row.state)).toEqual(Array(count).fill('dead'));
  return { ...hook, path, rows, heal: () => (state.healthy = true) };
}

async function expectValid(page: Page, label: string) {
  expect(page.headers.get('content-security-policy'), label).toBe(CSP);
  expect(page.html, label).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  expect(page.html, label).not.toMatch(/\sstyle=/);
  const report = await validator.validateString(page.html);
  expect(report.results.flatMap((r) => r.messages.map((m) => `${label} ${m.line}:${m.column} ${m.ruleId}: ${m.message}`)).join('\n')).toBe('');
}

describe('adding a webhook', () => {
  it('offers the form by its names, shows the secret once in a <code>, and the webhook is the API\'s (parity)', async () => {
    const { browser, api } = await signedIn();
    const list = await browser.get('/dashboard/webhooks');
    expect(list.html).toMatch(/<a class="button" href="\/dashboard\/webhooks\/new">Add webhook<\/a>/);
    const form = await browser.get('/dashboard/webhooks/new');
    expect(form.html).toMatch(/<label for="url">URL<\/label>/);
    expect(form.html).toMatch(/<input type="checkbox" id="event-order-placed" name="events" value="order.placed"><label for="event-order-placed">order.placed<\/label>/);
    expect(form.html).toMatch(/<label for="all-events">All events<\/label>/);
    expect(form.html).toMatch(/<button type="submit">Save<\/button>/);
    expect(form.html).not.toContain('value="webhook.test"');

    const { id, page, secret } = await addWebhook(browser, '/added', { description: 'Shop orders', maxAttempts: '5' });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(page.html).toContain('Copy it now');
    await browser.get(`/dashboard/webhooks/${id}`);
    await browser.get('/dashboard/webhooks');
    await browser.get(`/dashboard/webhooks/${id}/deliveries`);
    expect(browser.seen.filter((text) => text.includes(secret!))).toHaveLength(1);

    const listed = await t.http.get('/v2/webhooks', { headers: api });
    expect(listed.body.items).toEqual([expect.objectContaining({ id, url: receiver.url('/added'), events: ['order.placed', 'order.shipped'], description: 'Shop orders', maxAttempts: 5, active: true })]);
    expect(listed.text).not.toContain(secret!.slice(6));
    const shown = await browser.get('/dashboard/webhooks');
    expect(shown.html).toContain(receiver.url('/added'));
    expect(shown.html).toContain('order.placed, order.shipped');
    expect(shown.html).toContain('No attempt yet');
  });

  it('subscribes to every kind with "All events", and refuses a form without a kind or URL (nothing created)', async () => {
    const { customer, browser, api } = await signedIn();
    const all = await addWebhook(browser, '/all', { events: [], allEvents: '*' });
    expect((await t.http.get(`/v2/webhooks/${all.id}`, { headers: api })).body.events).toEqual(['*']);
    await browser.get('/dashboard/webhooks/new');
    expect((await browser.post('/dashboard/webhooks', { url: receiver.url('/none') })).status).toBe(422);
    expect((await browser.post('/dashboard/webhooks', { url: 'ftp://example.com/x', events: 'order.placed' })).status).toBe(422);
    const count = await t.database.db.selectFrom('webhooks').select('id').where('account_id', '=', customer.accountId).execute();
    expect(count).toHaveLength(1);
  });

  it('judges the form by the API\'s own schema (WebhookInput): the same field and message as POST /v2/webhooks', async () => {
    const { customer, browser, api } = await signedIn();
    const long = 'a'.repeat(501);
    const viaApi = await t.http.post('/v2/webhooks', { headers: api, json: { url: receiver.url('/long'), events: ['order.placed'], description: long } });
    expect(viaApi.status).toBe(422);
    const problem = (viaApi.body.errors as { field: string; message: string }[]).find((e) => e.field === 'description')!;
    await browser.get('/dashboard/webhooks/new');
    const viaForm = await browser.post('/dashboard/webhooks', { url: receiver.url('/long'), events: 'order.placed', description: long, maxAttempts: '7' });
    expect(viaForm.status).toBe(422);
    expect(viaForm.html).toContain(`description ${problem.message}`);
    expect(viaForm.html).toContain('maxAttempts');
    expect(await t.database.db.selectFrom('webhooks').select('id').where('account_id', '=', customer.accountId).execute()).toHaveLength(0);
  });
});

describe('a webhook\'s page', () => {
  it('sends a test event: the outcome is shown, the delivered row listed, signed with the secret shown', async () => {
    const { browser } = await signedIn();
    const { id, secret } = await addWebhook(browser, '/tested');
    const page = await sendTest(browser, id);
    for (const name of ['Send test event', 'Rotate secret', 'Disable', 'Delete', 'Replay all']) expect(page.html).toMatch(new RegExp(`<button type="submit"[^>]*>${name}</button>`));
    expect(page.html).toContain('<strong>Delivered</strong>, response 200');
    const [received] = await receiver.waitFor('/tested', 1);
    const payload = new StandardWebhook(secret!).verify(received!.raw, received!.headers as Record<string, string>) as { id: string; type: string };
    expect(payload.type).toBe('webhook.test');
    expect(page.html).toContain(payload.id);
    const log = await browser.get(`/dashboard/webhooks/${id}/deliveries`);
    expect(log.html).toMatch(/<td data-label="Event">webhook\.test<br><code>evt_[0-9a-f]{32}<\/code><\/td>\s*<td data-label="Attempt">1<\/td>\s*<td data-label="Outcome"><span class="badge badge-ok">Delivered<\/span><\/td>\s*<td data-label="Response"><span class="badge badge-ok">200<\/span><\/td>/);
  });

  it('shows an attempt\'s detail: headers and body sent (never the secret), status, duration, error class, the start of the answer', async () => {
    const { browser, api } = await signedIn();
    const { id, secret } = await addWebhook(browser, '/detailed');
    await sendTest(browser, id);
    const [attempt] = await apiLog(id, api);
    const [received] = await receiver.waitFor('/detailed', 1);
    const detail = await browser.get(`/dashboard/webhooks/${id}/deliveries/${attempt!.id}`);
    expect(detail.status).toBe(200);
    for (const label of ['Event id', 'Event type', 'Attempt number', 'Response status', 'Duration', 'Error class', 'Next attempt']) expect(detail.html).toContain(`<dt>${label}</dt>`);
    expect(detail.html).toContain(`<th scope="row">webhook-signature</th><td><code class="wrap">${String(received!.headers['webhook-signature'])}</code>`);
    expect(detail.html).toContain('x-cheese-signature');
    // The body sent, byte for byte (escaped as HTML), and the receiver's answer.
    expect(detail.html).toContain(received!.raw.replaceAll('"', '&quot;'));
    // Each body a box that scrolls when long (a phone, a big envelope), so it takes the keyboard's focus (axe: scrollable-region-focusable).
    expect(detail.html).toMatch(/<pre class="payload" tabindex="0"><code>ok<\/code><\/pre>/);
    expect(detail.html).not.toContain('<pre class="payload"><code>');
    expect(detail.html).not.toContain(secret!);
    expect(detail.html).not.toContain(secret!.slice(6, 30));
    await expectValid(detail, 'attempt detail');
  });

  it('disables and enables the webhook', async () => {
    const { browser, api } = await signedIn();
    const { id } = await addWebhook(browser, '/toggled');
    expect((await browser.post(`/dashboard/webhooks/${id}/disable`)).status).toBe(303);
    expect((await t.http.get(`/v2/webhooks/${id}`, { headers: api })).body.active).toBe(false);
    const paused = await browser.get(`/dashboard/webhooks/${id}`);
    expect(paused.html).toMatch(/<button type="submit">Enable<\/button>/);
    expect(paused.html).toContain('<dd><span class="badge badge-neutral">Paused</span></dd>');
    expect((await browser.post(`/dashboard/webhooks/${id}/enable`)).status).toBe(303);
    expect((await t.http.get(`/v2/webhooks/${id}`, { headers: api })).body.active).toBe(true);
  });

  it('edits URL, events and description', async () => {
    const { browser, api } = await signedIn();
    const { id } = await addWebhook(browser, '/before');
    const form = await browser.get(`/dashboard/webhooks/${id}/edit`);
    expect(form.html).toMatch(/value="order.shipped" checked/);
    expect((await browser.post(`/dashboard/webhooks/${id}/edit`, { url: receiver.url('/after'), events: ['order.cancelled'], description: 'Cancellations', maxAttempts: '6' })).status).toBe(303);
    expect((await t.http.get(`/v2/webhooks/${id}`, { headers: api })).body).toMatchObject({ url: receiver.url('/after'), events: ['order.cancelled'], description: 'Cancellations' });
  });

  it('deletes after a confirmation', async () => {
    const { browser, api } = await signedIn();
    const { id } = await addWebhook(browser, '/deleted');
    const confirm = await browser.get(`/dashboard/webhooks/${id}/delete`);
    expect(confirm.html).toMatch(/<button type="submit">Confirm<\/button>/);
    expect(confirm.html).not.toContain('id="password"');
    await expectValid(confirm, 'delete confirmation');
    expect(await webhookRow(id)).toBeDefined();
    expect((await browser.post(`/dashboard/webhooks/${id}/delete`)).status).toBe(303);
    expect(await webhookRow(id)).toBeUndefined();
    expect((await t.http.get(`/v2/webhooks/${id}`, { headers: api })).status).toBe(404);
  });

  it('rotates the secret: the new one is shown once, the old one signs for 24 hours beside it', async () => {
    const { browser } = await signedIn();
    const { id, secret: old } = await addWebhook(browser, '/rotated');
    const before = await webhookRow(id);
    await browser.get(`/dashboard/webhooks/${id}`);
    const rotated = await browser.post(`/dashboard/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(303);
    const page = await browser.get(rotated.location!);
    const fresh = SECRET.exec(page.html)?.[1];
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    expect(page.html).toContain('The old secret also signs every delivery until');
    expect((await browser.get(`/dashboard/webhooks/${id}`)).html).not.toContain(fresh!);
    expect(browser.seen.filter((text) => text.includes(fresh!))).toHaveLength(1);
    const after = await webhookRow(id);
    expect(after!.secret_ciphertext).not.toBe(before!.secret_ciphertext);
    expect(Date.parse(String(after!.previous_secret_expires_at)) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    await sendTest(browser, id);
    const [delivery] = await receiver.waitFor('/rotated', 1);
    for (const secret of [old!, fresh!]) new StandardWebhook(secret).verify(delivery!.raw, delivery!.headers as Record<string, string>);
  });
});

describe('the dead letter queue', () => {
  it('replays one from the attempt log: its new attempt is in GET /v2/webhooks/{id}/deliveries', async () => {
    const { browser, api } = await signedIn();
    const hook = await withDeadLetters(browser);
    hook.heal();
    const log = await browser.get(`/dashboard/webhooks/${hook.id}/deliveries`);
    const first = hook.rows[0]!;
    expect(log.html).toContain(`<button type="submit">Replay<span class="visually-hidden"> event ${first.event_id}</span></button>`);
    const replayed = await browser.post(`/dashboard/webhooks/${hook.id}/dead-letters/${first.id}/replay`, { back: `/dashboard/webhooks/${hook.id}/deliveries?outcome=dead_lettered` });
    expect(replayed.status).toBe(303);
    expect(replayed.location).toBe(`/dashboard/webhooks/${hook.id}/deliveries?outcome=dead_lettered&replayed=1`);
    await expect.poll(async () => (await apiLog(hook.id, api)).filter((a) => a.eventId === first.event_id).map((a) => a.outcome), { timeout: 5000 }).toEqual(['delivered', 'dead_lettered']);
    expect((await deliveries(hook.id)).map((row) => row.state)).toEqual(['delivered', 'dead']);
    const after = await browser.get(`/dashboard/webhooks/${hook.id}/deliveries`);
    // The old dead-lettered attempt has no Replay any more; the other one still has.
    expect(after.html).not.toContain(`Replay<span class="visually-hidden"> event ${first.event_id}`);
    expect(after.html).toContain(`Replay<span class="visually-hidden"> event ${hook.rows[1]!.event_id}`);
  });

  it('replays the selected ones across the caller\'s webhooks, and all of one webhook after a confirmation stating the count', async () => {
    const { browser, api } = await signedIn();
    const a = await withDeadLetters(browser, 3);
    const b = await withDeadLetters(browser, 1);
    a.heal();
    b.heal();
    const queue = await browser.get('/dashboard/webhooks/dead-letters');
    await expectValid(queue, 'dead letter queue');
    for (const row of [...a.rows, ...b.rows]) expect(queue.html).toContain(`<label for="select-${row.id}" class="visually-hidden">Select event ${row.event_id}</label>`);
    expect(queue.html).toMatch(/<button type="submit" form="replay-selected">Replay selected<\/button>/);
    const selected = await browser.post('/dashboard/webhooks/dead-letters/replay-selected', { delivery: [String(a.rows[0]!.id), String(b.rows[0]!.id)], webhook: '', account: '', back: '/dashboard/webhooks/dead-letters' });
    expect(selected.status).toBe(303);
    expect(selected.location).toBe('/dashboard/webhooks/dead-letters?replayed=2');
    await expect.poll(async () => (await apiLog(b.id, api)).map((x) => x.outcome), { timeout: 5000 }).toEqual(['delivered', 'dead_lettered']);

    const page = await browser.get(`/dashboard/webhooks/${a.id}`);
    expect(page.html).toMatch(/<form method="get" action="\/dashboard\/webhooks\/dead-letters\/replay-all" class="inline">\s*<input type="hidden" name="webhook" value="\d+">\s*<button type="submit">Replay all<\/button>/);
    const confirm = await browser.get(`/dashboard/webhooks/dead-letters/replay-all?webhook=${a.id}`);
    expect(confirm.html).toContain(`Replay all 2 dead-lettered events of the webhook ${receiver.url(a.path)}?`);
    await expectValid(confirm, 'replay-all confirmation');
    const all = await browser.post('/dashboard/webhooks/dead-letters/replay-all', { webhook: String(a.id), account: '' });
    expect(all.status).toBe(303);
    expect(all.location).toBe(`/dashboard/webhooks/${a.id}/dead-letters?replayed=2`);
    await expect.poll(async () => (await deliveries(a.id)).map((row) => row.state), { timeout: 5000 }).toEqual(['delivered', 'delivered', 'delivered']);
    expect((await apiLog(a.id, api)).filter((x) => x.outcome === 'delivered')).toHaveLength(3);
    expect((await browser.get(`/dashboard/webhooks/${a.id}/dead-letters`)).html).toContain('No dead-lettered events.');
  });
});

describe('the attempt log\'s filters', () => {
  it('live in the URL: checked boxes, type and dates round-trip, and the next and previous links carry them with the cursor', async () => {
    const { browser } = await signedIn();
    const path = `/mixed-${++seq}`;
    receiver.on(path, (n) => ({ status: n % 3 === 0 ? 500 : 200 }));
    const { id } = await addWebhook(browser, path);
    for (let i = 0; i < 24; i++) await browser.post(`/dashboard/webhooks/${id}/test`);
    const today = new Date().toISOString().slice(0, 10);
    const query = `outcome=delivered&outcome=dead_lettered&eventType=webhook.test&from=${today}&to=${today}`;
    const first = await browser.get(`/dashboard/webhooks/${id}/deliveries?${query}`);
    await expectValid(first, 'filtered deliveries');
    for (const label of ['Delivered', 'Failed', 'Pending', 'Dead-lettered']) expect(first.html).toMatch(new RegExp(`<input type="checkbox" id="[a-z-]+" name="outcome" value="[a-z_]+"( checked)?><label for="[a-z-]+">${label}</label>`));
    expect(first.html).toContain('value="delivered" checked');
    expect(first.html).toContain('value="dead_lettered" checked');
    expect(first.html).not.toContain('value="failed" checked');
    expect(first.html).toContain('<option value="webhook.test" selected>');
    expect(first.html).toContain(`id="from" name="from" value="${today}"`);
    expect(first.html).toMatch(/<button type="submit">Filter<\/button>/);
    const rowsOf = (page: Page) => [...page.html.matchAll(/href="\/dashboard\/webhooks\/\d+\/deliveries\/(\d+)"/g)].map((m) => Number(m[1]));
    expect(rowsOf(first)).toHaveLength(20);
    const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    expect(next).toMatch(new RegExp(`^/dashboard/webhooks/${id}/deliveries\\?${query.replaceAll('.', '\\.')}&next=[A-Za-z0-9_.-]+$`));
    const second = await browser.get(next);
    expect(rowsOf(second)).toHaveLength(4);
    expect(second.html).not.toContain('rel="next"');
    const previous = /<a href="([^"]+)" rel="prev">Previous page<\/a>/.exec(second.html)![1]!.replaceAll('&amp;', '&');
    expect(previous).toContain(`${query}&prev=`);
    const back = await browser.get(previous);
    expect(rowsOf(back)).toEqual(rowsOf(first));
    expect(back.html).not.toContain('rel="prev"');

    const deadOnly = await browser.get(`/dashboard/webhooks/${id}/deliveries?outcome=dead_lettered`);
    expect(rowsOf(deadOnly)).toHaveLength(8);
    expect(deadOnly.html).not.toContain('badge-ok">Delivered</span>');
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await browser.get(`/dashboard/webhooks/${id}/deliveries?from=${tomorrow}`)).html).toContain('No attempt matches these filters.');
    expect((await browser.get(`/dashboard/webhooks/${id}/deliveries?from=${tomorrow}&to=${today}`)).status).toBe(422);
    expect((await browser.get(`/dashboard/webhooks/${id}/deliveries?from=yesterday`)).status).toBe(422);
  });

  it('Pending: failed attempts whose event still waits for its next attempt', async () => {
    const { browser, api } = await signedIn();
    const hook = await withDeadLetters(browser, 1);
    const [deadLettered] = hook.rows;
    // An order: its first attempt fails (the receiver answers 500) and the next is a day away.
    const staff = bearer(await t.key(['admin']));
    const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Pending cheese ${++seq}`, pricePerKg: 20, stockQuantityKg: 10, status: 'available' } });
    expect(cheese.status).toBe(201);
    const placed = await t.http.post('/v2/orders', { headers: api, json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } } });
    expect(placed.status, placed.text).toBe(201);
    const attempted = async () => {
      const row = (await deliveries(hook.id)).find((d) => d.id !== deadLettered!.id);
      const tried = row && (await t.database.db.selectFrom('webhook_attempts').select('outcome').where('delivery_id', '=', row.id).execute());
      return row && tried?.length ? { row, outcomes: tried.map((a) => a.outcome) } : undefined;
    };
    await expect.poll(attempted, { timeout: 10_000 }).toBeDefined();
    const { row: waiting, outcomes } = (await attempted())!;
    expect([waiting.state, outcomes]).toEqual(['pending', ['failed']]);
    const pending = await browser.get(`/dashboard/webhooks/${hook.id}/deliveries?outcome=pending`);
    expect(pending.html).toContain(waiting!.event_id);
    expect(pending.html).toContain('<td data-label="Outcome"><span class="badge badge-info">Pending</span></td>');
    expect(pending.html).not.toContain(deadLettered!.event_id);
    const failed = await browser.get(`/dashboard/webhooks/${hook.id}/deliveries?outcome=failed`);
    expect(failed.html).toContain(waiting!.event_id);
    const dead = await browser.get(`/dashboard/webhooks/${hook.id}/deliveries?outcome=dead_lettered`);
    expect(dead.html).not.toContain(waiting!.event_id);
  });
});

describe('refusals', () => {
  it('a form without a CSRF token, or with another session\'s, is 403 and changes nothing', async () => {
    const { customer, browser } = await signedIn();
    const other = await signedIn();
    await other.browser.get('/dashboard/webhooks/new');
    const hook = await withDeadLetters(browser, 1);
    const before = await webhookRow(hook.id);
    const attempts = async () => (await t.database.db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', hook.id).execute()).length;
    const madeBefore = await attempts();
    const posts: [string, Record<string, string | string[]>][] = [
      ['/dashboard/webhooks', { url: receiver.url('/csrf'), events: 'order.placed' }],
      [`/dashboard/webhooks/${hook.id}/rotate-secret`, {}],
      [`/dashboard/webhooks/${hook.id}/disable`, {}],
      [`/dashboard/webhooks/${hook.id}/test`, {}],
      [`/dashboard/webhooks/${hook.id}/edit`, { url: receiver.url('/csrf'), events: 'order.placed' }],
      [`/dashboard/webhooks/${hook.id}/delete`, {}],
      [`/dashboard/webhooks/${hook.id}/dead-letters/${hook.rows[0]!.id}/replay`, {}],
      ['/dashboard/webhooks/dead-letters/replay-selected', { delivery: String(hook.rows[0]!.id) }],
      ['/dashboard/webhooks/dead-letters/replay-all', { webhook: String(hook.id) }],
    ];
    for (const [path, fields] of posts) {
      expect((await browser.post(path, fields, { csrf: null })).status, `${path} without a token`).toBe(403);
      expect((await browser.post(path, fields, { csrf: other.browser.csrf! })).status, `${path} with another session's`).toBe(403);
    }
    expect(await webhookRow(hook.id)).toEqual(before);
    expect(await attempts()).toBe(madeBefore);
    expect((await deliveries(hook.id)).map((row) => row.state)).toEqual(['dead']);
    expect(await t.database.db.selectFrom('webhooks').select('id').where('account_id', '=', customer.accountId).execute()).toHaveLength(1);
  });

  it('another account\'s webhook, attempt and delivery are 404 on every page and action; bulk replays touch only the caller\'s', async () => {
    const owner = await signedIn();
    const hook = await withDeadLetters(owner.browser, 2);
    const [attempt] = await apiLog(hook.id, owner.api);
    const { browser } = await signedIn();
    const mine = await withDeadLetters(browser, 1);
    const before = await webhookRow(hook.id);
    for (const path of [`/${hook.id}`, `/${hook.id}/edit`, `/${hook.id}/delete`, `/${hook.id}/deliveries`, `/${hook.id}/deliveries/${attempt!.id}`, `/${hook.id}/dead-letters`, `/dead-letters/replay-all?webhook=${hook.id}`, `/${mine.id}/deliveries/${attempt!.id}`]) {
      expect((await browser.get(`/dashboard/webhooks${path}`)).status, path).toBe(404);
    }
    await browser.get('/dashboard/webhooks');
    for (const [path, fields] of [
      [`/${hook.id}/test`, {}],
      [`/${hook.id}/rotate-secret`, {}],
      [`/${hook.id}/disable`, {}],
      [`/${hook.id}/delete`, {}],
      [`/${hook.id}/edit`, { url: receiver.url('/stolen'), events: 'order.placed' }],
      [`/${hook.id}/dead-letters/${hook.rows[0]!.id}/replay`, {}],
      [`/${mine.id}/dead-letters/${hook.rows[0]!.id}/replay`, {}],
      ['/dead-letters/replay-all', { webhook: String(hook.id) }],
      ['/dead-letters/replay-selected', { delivery: String(hook.rows[0]!.id), webhook: String(hook.id) }],
    ] as const) {
      expect((await browser.post(`/dashboard/webhooks${path}`, fields)).status, path).toBe(404);
    }
    // Bulk replays across the caller's webhooks: the other account's deliveries are not theirs to touch.
    const selected = await browser.post('/dashboard/webhooks/dead-letters/replay-selected', { delivery: [String(hook.rows[0]!.id), String(hook.rows[1]!.id)] });
    expect(selected.location).toBe('/dashboard/webhooks/dead-letters?replayed=0');
    expect((await browser.get('/dashboard/webhooks/dead-letters/replay-all')).html).toContain('Replay all 1 dead-lettered event of your webhooks?');
    const all = await browser.post('/dashboard/webhooks/dead-letters/replay-all', {});
    expect(all.location).toBe('/dashboard/webhooks/dead-letters?replayed=1');
    expect((await deliveries(hook.id)).map((row) => row.state)).toEqual(['dead', 'dead']);
    expect(await webhookRow(hook.id)).toEqual(before);
    expect((await apiLog(hook.id, owner.api)).map((a) => a.outcome)).toEqual(['dead_lettered', 'dead_lettered']);
    const lists = [await browser.get('/dashboard/webhooks'), await browser.get('/dashboard/webhooks/dead-letters')];
    for (const list of lists) expect(list.html).not.toContain(receiver.url(hook.path));
  });

  it('staff see every account\'s webhooks and dead letters, and filter them by account', async () => {
    const owner = await signedIn();
    const hook = await withDeadLetters(owner.browser, 1);
    const staff = await staffBrowser();
    const all = await staff.get('/dashboard/webhooks');
    expect(all.html).toContain(receiver.url(hook.path));
    await expectValid(all, 'staff list');
    const filtered = await staff.get(`/dashboard/webhooks?account=${owner.customer.username}`);
    expect(filtered.html).toContain(receiver.url(hook.path));
    expect(filtered.html).toContain(`<td data-label="Account">${owner.customer.username}</td>`);
    expect((await staff.get('/dashboard/webhooks?account=nobody-at-all')).html).not.toContain(receiver.url(hook.path));
    const queue = await staff.get(`/dashboard/webhooks/dead-letters?account=${owner.customer.username}`);
    expect(queue.html).toContain(hook.rows[0]!.event_id);
    expect((await staff.get(`/dashboard/webhooks/${hook.id}`)).status).toBe(200);
    expect((await staff.get('/dashboard/webhooks/dead-letters?account=nobody-at-all')).html).toContain('No dead-lettered events.');
  });
});

describe('step-up', () => {
  it('asks for the password when the sign-in is older than 10 minutes: rotate, delete, bulk replay; a wrong one changes nothing', async () => {
    const { customer, browser } = await signedIn();
    const hook = await withDeadLetters(browser, 1);
    const before = await webhookRow(hook.id);
    stale();

    await browser.get(`/dashboard/webhooks/${hook.id}`);
    const asked = await browser.post(`/dashboard/webhooks/${hook.id}/rotate-secret`);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain('enter your password again');
    expect(asked.html).toMatch(/<label for="password">Password<\/label>/);
    await expectValid(asked, 'step-up');
    const wrong = await browser.post(`/dashboard/webhooks/${hook.id}/rotate-secret`, { password: 'not my password at all' });
    expect(wrong.status).toBe(401);
    expect(await webhookRow(hook.id)).toEqual(before);

    expect((await browser.get(`/dashboard/webhooks/${hook.id}/delete`)).html).toContain('id="password"');
    expect((await browser.post(`/dashboard/webhooks/${hook.id}/delete`, { password: 'not my password at all' })).status).toBe(401);
    expect((await browser.get(`/dashboard/webhooks/dead-letters/replay-all?webhook=${hook.id}`)).html).toContain('id="password"');
    expect((await browser.post('/dashboard/webhooks/dead-letters/replay-all', { webhook: String(hook.id), password: 'not my password at all' })).status).toBe(401);
    expect((await browser.post('/dashboard/webhooks/dead-letters/replay-selected', { delivery: String(hook.rows[0]!.id) })).html).toContain('id="password"');
    expect(await webhookRow(hook.id)).toEqual(before);
    expect((await deliveries(hook.id)).map((row) => row.state)).toEqual(['dead']);

    // Not for the actions that are not sensitive.
    await browser.get(`/dashboard/webhooks/${hook.id}`);
    expect((await browser.post(`/dashboard/webhooks/${hook.id}/test`)).status).toBe(303);

    const right = await browser.post(`/dashboard/webhooks/${hook.id}/rotate-secret`, { password: customer.password });
    expect(right.status).toBe(303);
    expect((await webhookRow(hook.id))!.secret_ciphertext).not.toBe(before!.secret_ciphertext);
    // The password given again counts as a fresh sign-in for the next 10 minutes.
    await browser.get(`/dashboard/webhooks/${hook.id}`);
    expect((await browser.post(`/dashboard/webhooks/${hook.id}/delete`)).status).toBe(303);
    expect(await webhookRow(hook.id)).toBeUndefined();
  });
});

describe('every webhooks page', () => {
  it('is valid HTML under the strict CSP, empty and with data', async () => {
    const { browser } = await signedIn();
    for (const path of ['/dashboard/webhooks', '/dashboard/webhooks/new', '/dashboard/webhooks/dead-letters']) await expectValid(await browser.get(path), `${path} (empty)`);
    const hook = await withDeadLetters(browser, 1);
    for (const path of ['/dashboard/webhooks', `/dashboard/webhooks/${hook.id}`, `/dashboard/webhooks/${hook.id}/edit`, `/dashboard/webhooks/${hook.id}/deliveries`, `/dashboard/webhooks/${hook.id}/dead-letters`, '/dashboard/webhooks/dead-letters', `/dashboard/webhooks/${hook.id}/deliveries/${(await apiLogOf(hook.id))[0]!.id}`]) {
      const page = await browser.get(path);
      expect(page.status, path).toBe(200);
      await expectValid(page, path);
    }
  });
});

async function apiLogOf(id: number): Promise<{ id: number }[]> {
  return t.database.db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', id).orderBy('id', 'desc').execute();
}

