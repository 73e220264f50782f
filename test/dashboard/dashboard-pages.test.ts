import { HtmlValidate } from 'html-validate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, sampleEnvelopes } from '../../src/modules/outbox/outbox.module.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer, type Page } from '../helpers/dashboard.js';
import { bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';

/** The dashboard's Events, Orders, Authorized apps and OAuth clients pages (issue 19, pages 6 to 9), over real HTTP. */
let t: TestApp;
let live: TestApp;
let staffKey: string;
beforeAll(async () => {
  [t, live] = await Promise.all([createTestApp(), createTestApp({ env: 'production' })]);
  staffKey = await t.key(['admin']);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await live?.close();
});

const REDIRECT = 'http://127.0.0.1:9/callback';
// The recommended rules, but for two matters of style: the layout's `<!doctype html>`, and checkbox groups sharing one name (how a form sends a list).
const validator = new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'form-dup-name': ['error', { shared: ['radio', 'checkbox', 'button', 'reset', 'submit'] }] } });

/** What Eta's escaping makes of a text in the page. */
const escaped = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');

async function expectValidHtml(page: Page): Promise<void> {
  const report = await validator.validateString(page.html);
  const messages = report.results.flatMap((result) => result.messages.map((m) => `${m.ruleId} (line ${m.line}): ${m.message}`));
  expect(messages).toEqual([]);
}

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

const tokens = new Map<string, string>();
/** A login token of the customer (one per customer: logging in hashes the password). */
async function loginToken(app: TestApp, username: string, password: string): Promise<string> {
  const known = tokens.get(`${app.http.baseUrl} ${username}`);
  if (known) return known;
  const res = await app.http.post('/v2/customer/login', { json: { username, password } });
  expect(res.status).toBe(200);
  tokens.set(`${app.http.baseUrl} ${username}`, res.body.token as string);
  return res.body.token as string;
}

let cheeses = 0;
/** A cheese in stock, and an order of it placed by the customer through /v2; answers the order's id. */
async function placeOrder(app: TestApp, adminKey: string, customer: { username: string; password: string }): Promise<number> {
  const cheese = await app.http.post('/v2/cheeses', { headers: bearer(adminKey), json: { name: `Pages Tomme ${++cheeses} ${process.pid}`, pricePerKg: 20, stockQuantityKg: 50 } });
  expect(cheese.status).toBe(201);
  const token = await loginToken(app, customer.username, customer.password);
  const order = await app.http.post('/v2/orders', { headers: bearer(token), json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Test Street', city: 'Lyon', country: 'FR' } } } });
  expect(order.status, order.text).toBe(201);
  return order.body.id as number;
}

const statusOf = async (app: TestApp, id: number) => (await app.database.db.selectFrom('orders').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const eventsOf = (app: TestApp, id: number) => app.database.db.selectFrom('outbox').select('type').where('aggregate_type', '=', 'order').where('aggregate_id', '=', String(id)).orderBy('id').execute();
/** Whether the page's table has a row for the order (its row header). */
const lists = (page: Page, id: number) => page.html.includes(`<th scope="row"><a href="/dashboard/orders/${id}">#${id}</a></th>`);
const advanceButtons = (page: Page) => [...page.html.matchAll(/action="\/dashboard\/orders\/(\d+)\/advance"/g)].map((m) => Number(m[1]));

describe('events', () => {
  it('lists every event kind (Event kinds, linked from Events) with its trigger, description and the sample envelope of docs/events.md', async () => {
    const { browser } = await signedIn();
    const page = await browser.get('/dashboard/events/kinds');
    expect(page.status).toBe(200);
    for (const type of EVENT_TYPES) {
      expect(page.html, type).toContain(`<code>${type}</code></h2>`);
      const samples = sampleEnvelopes(type, { environment: 'development' });
      expect(samples.length, type).toBeGreaterThan(0);
      for (const sample of samples) expect(page.html, type).toContain(escaped(JSON.stringify(sample, null, 2)));
    }
    expect(page.html).toContain('Trigger.');
    await expectValidHtml(page);
  });
});

describe('orders', () => {
  it('shows a customer their own orders only; advancing another\'s is 404 and changes nothing', async () => {
    const alice = await signedIn();
    const bob = await signedIn();
    const mine = await placeOrder(t, staffKey, alice.customer);
    const theirs = await placeOrder(t, staffKey, bob.customer);
    const page = await alice.browser.get('/dashboard/orders');
    expect(page.status).toBe(200);
    expect(lists(page, mine)).toBe(true);
    expect(lists(page, theirs)).toBe(false);
    expect(advanceButtons(page)).toEqual([mine]);
    await expectValidHtml(page);
    const refused = await alice.browser.post(`/dashboard/orders/${theirs}/advance`);
    expect(refused.status).toBe(404);
    expect(await statusOf(t, theirs)).toBe('placed');
    expect(await eventsOf(t, theirs)).toEqual([{ type: 'order.placed' }]);
  });

  it('Advance moves an order one step, records its event, and comes back to the list; no button once delivered', async () => {
    const { customer, browser } = await signedIn();
    const id = await placeOrder(t, staffKey, customer);
    await browser.get('/dashboard/orders');
    const advanced = await browser.post(`/dashboard/orders/${id}/advance`, { back: '/dashboard/orders' });
    expect(advanced.status).toBe(303);
    expect(advanced.location).toBe('/dashboard/orders');
    expect(await statusOf(t, id)).toBe('approved');
    expect(await eventsOf(t, id)).toEqual([{ type: 'order.placed' }, { type: 'order.confirmed' }]);
    const page = await browser.get(advanced.location!);
    expect(page.html).toContain('Approved');
    for (const step of ['shipped', 'delivered']) {
      expect((await browser.post(`/dashboard/orders/${id}/advance`)).status).toBe(303);
      expect(await statusOf(t, id)).toBe(step);
    }
    expect((await eventsOf(t, id)).map((e) => e.type)).toEqual(['order.placed', 'order.confirmed', 'order.shipped', 'order.delivered']);
    const done = await browser.get('/dashboard/orders');
    expect(lists(done, id)).toBe(true);
    expect(advanceButtons(done)).toEqual([]);
    // A delivered order has no next state: 409, nothing recorded.
    expect((await browser.post(`/dashboard/orders/${id}/advance`)).status).toBe(409);
    expect(await eventsOf(t, id)).toHaveLength(4);
    // Where it sends back to is this list only, never elsewhere.
    const other = await placeOrder(t, staffKey, customer);
    expect((await browser.post(`/dashboard/orders/${other}/advance`, { back: 'https://evil.example/' })).location).toBe('/dashboard/orders');
  });

  it('with htmx (HX-Request), Advance answers the row of the order alone, advanced, with a working form', async () => {
    const { customer, browser } = await signedIn();
    const id = await placeOrder(t, staffKey, customer);
    await browser.get('/dashboard/orders');
    const row = await browser.post(`/dashboard/orders/${id}/advance`, { back: '/dashboard/orders' }, { headers: { 'hx-request': 'true' } });
    expect(row.status).toBe(200);
    expect(row.html.trim()).toMatch(/^<tr>[\s\S]*<\/tr>$/);
    expect(row.html).not.toContain('<html');
    expect(row.html).toContain('Approved');
    expect(await statusOf(t, id)).toBe('approved');
    // The fragment's form carries a token that works: the next step from it.
    expect(advanceButtons({ ...row, html: row.html })).toEqual([id]);
    const next = await browser.post(`/dashboard/orders/${id}/advance`, { back: '/dashboard/orders' }, { headers: { 'hx-request': 'true' } });
    expect(next.status).toBe(200);
    expect(await statusOf(t, id)).toBe('shipped');
  });

  it('refuses an Advance without a CSRF token (403): the order stays where it was', async () => {
    const { customer, browser } = await signedIn();
    const id = await placeOrder(t, staffKey, customer);
    await browser.get('/dashboard/orders');
    const refused = await browser.post(`/dashboard/orders/${id}/advance`, {}, { csrf: null });
    expect(refused.status).toBe(403);
    expect(await statusOf(t, id)).toBe('placed');
    expect(await eventsOf(t, id)).toHaveLength(1);
  });

  it('shows staff every account\'s orders, filtered by account, and lets them advance any', async () => {
    const alice = await signedIn();
    const bob = await signedIn();
    const hers = await placeOrder(t, staffKey, alice.customer);
    const his = await placeOrder(t, staffKey, bob.customer);
    const staff = await staffBrowser();
    const all = await staff.get('/dashboard/orders');
    expect(lists(all, hers) && lists(all, his)).toBe(true);
    expect(all.html).toContain(alice.customer.username);
    await expectValidHtml(all);
    const filtered = await staff.get(`/dashboard/orders?customer=${alice.customer.username}`);
    expect(lists(filtered, hers)).toBe(true);
    expect(lists(filtered, his)).toBe(false);
    await expectValidHtml(filtered);
    expect((await staff.post(`/dashboard/orders/${his}/advance`)).status).toBe(303);
    expect(await statusOf(t, his)).toBe('approved');
    // A customer cannot filter by account: the parameter is ignored, their own orders shown.
    const ignored = await alice.browser.get(`/dashboard/orders?customer=${bob.customer.username}`);
    expect(lists(ignored, hers)).toBe(true);
    expect(lists(ignored, his)).toBe(false);
  });

  it('pages through the orders newest first (keyset), 20 at a time', async () => {
    const { customer, browser } = await signedIn();
    const ids: number[] = [];
    for (let i = 0; i < 21; i++) ids.push(await placeOrder(t, staffKey, customer));
    const first = await browser.get('/dashboard/orders');
    expect(ids.filter((id) => lists(first, id))).toEqual(ids.slice(1));
    const next = /<a href="([^"]+)" rel="next">Older orders<\/a>/.exec(first.html)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toMatch(/^\/dashboard\/orders\?cursor=/);
    const second = await browser.get(next!);
    expect(ids.filter((id) => lists(second, id))).toEqual([ids[0]]);
    expect(second.html).not.toContain('rel="next"');
    expect(second.html).toContain('Newest orders');
    await expectValidHtml(second);
    // The Advance form on page 2 sends back to page 2.
    const back = /name="back" value="([^"]+)"/.exec(second.html)?.[1]?.replaceAll('&amp;', '&');
    expect(back).toBe(next);
    const advanced = await browser.post(`/dashboard/orders/${ids[0]}/advance`, { back: back! });
    expect(advanced.location).toBe(next);
  });

  it('has no Advance in production: no button, and the action is 404', async () => {
    const adminKey = await live.key(['admin']);
    const { customer, browser } = await signedIn(live);
    const id = await placeOrder(live, adminKey, customer);
    const page = await browser.get('/dashboard/orders');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Live');
    expect(lists(page, id)).toBe(true);
    expect(advanceButtons(page)).toEqual([]);
    expect(page.html).not.toContain('Advance');
    await expectValidHtml(page);
    const refused = await browser.post(`/dashboard/orders/${id}/advance`);
    expect(refused.status).toBe(404);
    expect(await statusOf(live, id)).toBe('placed');
    expect(await eventsOf(live, id)).toHaveLength(1);
  });
});

let clients = 0;
/** A confidential client registered by staff through /v2, for the code flow. */
async function registerClient(scopes = ['read:cheeses', 'read:profile', 'write:profile']): Promise<{ clientId: string; clientSecret: string; name: string }> {
  const name = `Pages app ${++clients}`;
  const res = await t.http.post('/v2/oauth-clients', { headers: bearer(staffKey), json: { name, type: 'confidential', grants: ['authorization_code', 'refresh_token'], scopes, redirectUris: [REDIRECT] } });
  expect(res.status).toBe(201);
  return { ...res.body, name };
}

/** The customer authorizes the client through the login and consent pages; the code is exchanged for tokens. */
async function authorize(client: { clientId: string; clientSecret: string }, customer: { username: string; password: string }, scope = 'read:cheeses read:profile'): Promise<{ access_token: string; refresh_token: string }> {
  const url = new URL('/oauth/authorize', t.http.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope, state: 'pages' })) url.searchParams.set(name, value);
  const outcome = await authorizeThroughForms(url, customer.username, customer.password);
  expect(outcome.status).toBe(303);
  const code = new URL(outcome.location!).searchParams.get('code')!;
  const response = await fetch(`${t.http.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string };
}

const grantsOf = (accountId: number) => t.database.db.selectFrom('oauth_grants').select(['id', 'revoked_at']).where('account_id', '=', accountId).execute();

describe('authorized apps', () => {
  it('lists the app a customer authorized, with its scopes; Revoke (after a confirmation) kills its tokens at once', async () => {
    const { customer, browser } = await signedIn();
    const client = await registerClient();
    const tokens = await authorize(client, customer);
    expect((await t.http.get(`/v2/customer/${customer.username}`, { headers: bearer(tokens.access_token) })).status).toBe(200);

    const page = await browser.get('/dashboard/apps');
    expect(page.status).toBe(200);
    expect(page.html).toContain(client.name);
    expect(page.html).toContain(client.clientId);
    expect(page.html).toContain('<code>read:profile</code>');
    expect(page.html).not.toContain('<code>write:profile</code>'); // asked for and granted: read:cheeses read:profile only
    expect(page.html).toContain(`href="/dashboard/apps/${client.clientId}/revoke">Revoke`);
    await expectValidHtml(page);

    const confirm = await browser.get(`/dashboard/apps/${client.clientId}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain(client.name);
    expect(confirm.html).toContain('>Confirm</button>');
    await expectValidHtml(confirm);
    const revoked = await browser.post(`/dashboard/apps/${client.clientId}/revoke`);
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe('/dashboard/apps');

    expect((await t.http.get(`/v2/customer/${customer.username}`, { headers: bearer(tokens.access_token) })).status).toBe(401);
    const refresh = await fetch(`${t.http.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
    });
    expect(refresh.status).toBe(400);
    const grants = await grantsOf(customer.accountId);
    expect(grants).toHaveLength(1);
    expect(grants[0]!.revoked_at).not.toBeNull();
    const after = await browser.get('/dashboard/apps');
    expect(after.html).not.toContain(client.clientId);
    expect(after.html).toContain('No application has access to your account.');
    await expectValidHtml(after);
  });

  it('keeps another customer\'s app out of reach (404, nothing revoked), and refuses a revocation without a CSRF token (403)', async () => {
    const alice = await signedIn();
    const bob = await signedIn();
    const client = await registerClient();
    const tokens = await authorize(client, alice.customer);
    expect((await bob.browser.get('/dashboard/apps')).html).not.toContain(client.clientId);
    expect((await bob.browser.get(`/dashboard/apps/${client.clientId}/revoke`)).status).toBe(404);
    expect((await bob.browser.post(`/dashboard/apps/${client.clientId}/revoke`)).status).toBe(404);
    await alice.browser.get('/dashboard/apps');
    expect((await alice.browser.post(`/dashboard/apps/${client.clientId}/revoke`, {}, { csrf: null })).status).toBe(403);
    expect((await grantsOf(alice.customer.accountId)).map((g) => g.revoked_at)).toEqual([null]);
    expect((await t.http.get(`/v2/customer/${alice.customer.username}`, { headers: bearer(tokens.access_token) })).status).toBe(200);
  });

  it('is for customers: staff get 404 and no link', async () => {
    const staff = await staffBrowser();
    const overview = await staff.get('/dashboard');
    expect(overview.html).not.toContain('Authorized apps');
    expect(overview.html).toContain('OAuth clients');
    expect((await staff.get('/dashboard/apps')).status).toBe(404);
    const { browser } = await signedIn();
    const page = await browser.get('/dashboard');
    expect(page.html).toContain('href="/dashboard/apps"');
    expect(page.html).not.toContain('href="/dashboard/oauth-clients"');
  });
});

const SECRET = /<code id="revealed-secret">(cs_[A-Za-z0-9_-]+)<\/code>/;
const clientRow = (clientId: string) => t.database.db.selectFrom('oauth_clients').select(['id', 'name', 'client_type', 'grants', 'scopes', 'redirect_uris']).where('client_id', '=', clientId).executeTakeFirst();

describe('OAuth clients', () => {
  it('is for staff: a customer gets 404 on every page and action, and registers nothing', async () => {
    const { browser } = await signedIn();
    const before = await t.database.db.selectFrom('oauth_clients').select('id').execute();
    for (const path of ['/dashboard/oauth-clients', '/dashboard/oauth-clients/new', `/dashboard/oauth-clients/${before[0]?.id ?? 1}/delete`]) {
      expect((await browser.get(path)).status, path).toBe(404);
    }
    await browser.get('/dashboard');
    const refused = await browser.post('/dashboard/oauth-clients', { name: 'Sneaky', type: 'confidential', grants: 'client_credentials', scopes: 'read:cheeses' });
    expect(refused.status).toBe(404);
    expect(await t.database.db.selectFrom('oauth_clients').select('id').execute()).toHaveLength(before.length);
  });

  it('registers a confidential client: the secret in exactly one response, and it works at /oauth/token; Delete removes it', async () => {
    const staff = await staffBrowser();
    const responses: Page[] = [];
    const seen = async (page: Promise<Page>) => {
      const answered = await page;
      responses.push(answered);
      return answered;
    };
    const list = await seen(staff.get('/dashboard/oauth-clients'));
    expect(list.html).toContain('href="/dashboard/oauth-clients/new">Register client</a>');
    const form = await seen(staff.get('/dashboard/oauth-clients/new'));
    for (const control of ['<label for="name">Name</label>', '<legend>Type</legend>', '>Public</label>', '>Confidential</label>', '>client_credentials</label>', '>read:cheeses</label>', '<label for="redirect-uris">Redirect URIs</label>', '<button type="submit">Register</button>']) {
      expect(form.html).toContain(control);
    }
    await expectValidHtml(form);
    const registered = await seen(staff.post('/dashboard/oauth-clients', { name: 'Pages backend', type: 'confidential', grants: ['client_credentials', 'authorization_code'], scopes: ['read:cheeses', 'read:orders'], redirectUris: `${REDIRECT}\n https://app.example/cb ` }));
    expect(registered.status).toBe(303);
    expect(registered.location).toBe('/dashboard/oauth-clients');
    const shown = await seen(staff.get('/dashboard/oauth-clients'));
    await expectValidHtml(shown);
    const secret = SECRET.exec(shown.html)?.[1];
    expect(secret).toBeDefined();
    const clientId = /Its client ID is (cl_[A-Za-z0-9_-]+)\./.exec(shown.html)?.[1];
    expect(clientId).toBeDefined();
    const reloaded = await seen(staff.get('/dashboard/oauth-clients'));
    expect(reloaded.html).toContain(clientId!);
    expect(responses.filter((page) => page.html.includes(secret!) || JSON.stringify([...page.headers]).includes(secret!))).toHaveLength(1);
    const row = await clientRow(clientId!);
    expect(row).toMatchObject({ name: 'Pages backend', client_type: 'confidential', scopes: 'read:cheeses read:orders', redirect_uris: JSON.stringify([REDIRECT, 'https://app.example/cb']) });
    expect(row!.grants.split(' ').sort()).toEqual(['authorization_code', 'client_credentials']);

    const basic = `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
    const token = async () => fetch(`${t.http.baseUrl}/oauth/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read:cheeses' }) });
    const issued = await token();
    expect(issued.status).toBe(200);
    const accessToken = ((await issued.json()) as { access_token: string }).access_token;
    expect((await t.http.get('/v2/cheeses', { headers: bearer(accessToken) })).status).toBe(200);

    const confirm = await staff.get(`/dashboard/oauth-clients/${row!.id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Pages backend');
    expect(confirm.html).toContain('>Confirm</button>');
    await expectValidHtml(confirm);
    expect((await staff.post(`/dashboard/oauth-clients/${row!.id}/delete`, {}, { csrf: null })).status).toBe(403);
    expect(await clientRow(clientId!)).toBeDefined();
    const deleted = await staff.post(`/dashboard/oauth-clients/${row!.id}/delete`);
    expect(deleted.status).toBe(303);
    expect(await clientRow(clientId!)).toBeUndefined();
    expect((await token()).status).toBe(401);
    expect((await staff.get('/dashboard/oauth-clients')).html).not.toContain(clientId!);
    expect((await staff.get(`/dashboard/oauth-clients/${row!.id}/delete`)).status).toBe(404);
  });

  it('registers a public client with no secret shown', async () => {
    const staff = await staffBrowser();
    await staff.get('/dashboard/oauth-clients/new');
    const registered = await staff.post('/dashboard/oauth-clients', { name: 'Pages SPA', type: 'public', grants: ['authorization_code', 'refresh_token'], scopes: 'read:cheeses', redirectUris: 'https://spa.example/cb' });
    expect(registered.status).toBe(303);
    const page = await staff.get('/dashboard/oauth-clients');
    expect(page.html).not.toContain('revealed-secret');
    expect(page.html).toContain('Pages SPA');
    const row = await t.database.db.selectFrom('oauth_clients').select(['client_type', 'secret_hash']).where('name', '=', 'Pages SPA').executeTakeFirstOrThrow();
    expect(row).toEqual({ client_type: 'public', secret_hash: null });
  });

  it('shows the form again with what is wrong (422), keeping what was typed, and registers nothing', async () => {
    const staff = await staffBrowser();
    const count = async () => (await t.database.db.selectFrom('oauth_clients').select('id').execute()).length;
    const before = await count();
    await staff.get('/dashboard/oauth-clients/new');
    const publicWithSecretGrant = await staff.post('/dashboard/oauth-clients', { name: 'Broken app', type: 'public', grants: 'client_credentials', scopes: 'read:cheeses', redirectUris: '' });
    expect(publicWithSecretGrant.status).toBe(422);
    expect(publicWithSecretGrant.html).toContain('a public client cannot use client_credentials');
    expect(publicWithSecretGrant.html).toContain('value="Broken app"');
    await expectValidHtml(publicWithSecretGrant);
    const badUri = await staff.post('/dashboard/oauth-clients', { name: 'Broken app', type: 'confidential', grants: 'authorization_code', scopes: 'read:cheeses', redirectUris: 'http://app.example/cb' });
    expect(badUri.status).toBe(422);
    expect(badUri.html).toContain('Redirect URI http://app.example/cb must be https');
    const nothingTicked = await staff.post('/dashboard/oauth-clients', { name: '   ', type: 'confidential' });
    expect(nothingTicked.status).toBe(422);
    expect(nothingTicked.html).toContain('Grants needs at least one');
    expect(nothingTicked.html).toContain('Scopes needs at least one');
    expect(nothingTicked.html).toContain('Name needs 1 to 100 characters');
    expect((await staff.post('/dashboard/oauth-clients', { name: 'No token', type: 'confidential', grants: 'client_credentials', scopes: 'read:cheeses' }, { csrf: null })).status).toBe(403);
    expect(await count()).toBe(before);
  });
});
