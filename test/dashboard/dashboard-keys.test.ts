import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/kernel/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { JumpingClock } from '../helpers/clock.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';

/** The API keys page (issue 19, page 2): create (shown once), roll, revoke, the 3-key cap, step-up for live keys. */
let t: TestApp;
let live: TestApp;
const liveClock = new JumpingClock();
beforeAll(async () => {
  t = await createTestApp();
  live = await createTestApp({ env: 'production', config: { clock: liveClock } });
});
afterAll(async () => {
  await t?.close();
  await live?.close();
});

const KEY = /<code id="revealed-secret">(sk_(?:test|live)_[A-Za-z0-9_-]+)<\/code>/;

async function signedIn(app: TestApp = t) {
  const customer = await signUpCustomer(app);
  const browser = new FormBrowser(app.http.baseUrl);
  await browser.signIn(customer.username, customer.password);
  return { customer, browser };
}

async function createKey(browser: FormBrowser, fields: Record<string, string | string[]> = {}) {
  await browser.get('/dashboard/keys/new');
  const created = await browser.post('/dashboard/keys', { name: 'storefront', scopes: ['read:cheeses', 'read:orders'], expires: 'never', ...fields });
  expect(created.status, created.html).toBe(303);
  const page = await browser.get('/dashboard/keys');
  return { page, key: KEY.exec(page.html)?.[1] };
}

const keysOf = (app: TestApp, accountId: number) =>
  app.database.db.selectFrom('api_keys').select(['id', 'name', 'scopes', 'expires_at', 'revoked_at', 'rolled_at']).where('account_id', '=', accountId).orderBy('id').execute();

describe('creating a key', () => {
  it('shows the key once, in a <code> element, never again after a reload; it works against /v2', async () => {
    const { customer, browser } = await signedIn();
    const { page, key } = await createKey(browser);
    expect(key).toMatch(/^sk_test_/);
    expect(page.html).toContain('Copy');
    const reloaded = await browser.get('/dashboard/keys');
    expect(reloaded.html).not.toContain(key!);
    expect(reloaded.html).toContain(key!.slice(0, 16)); // the prefix stays listed
    const res = await t.http.get('/v2/api-keys', { headers: { 'x-api-key': key! } });
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([expect.objectContaining({ name: 'storefront', scopes: ['read:cheeses', 'read:orders'], expiresAt: null })]);
    expect(await keysOf(t, customer.accountId)).toHaveLength(1);
  });

  it('sets the expiry chosen, and refuses a scope the account may not hold (nothing created)', async () => {
    const { customer, browser } = await signedIn();
    const { key } = await createKey(browser, { expires: '7' });
    const [row] = await keysOf(t, customer.accountId);
    const days = (Date.parse(String(row!.expires_at)) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.1);
    expect(key).toBeDefined();
    await browser.get('/dashboard/keys/new');
    const refused = await browser.post('/dashboard/keys', { name: 'too much', scopes: ['admin'], expires: 'never' });
    expect(refused.status).toBe(403);
    expect(await keysOf(t, customer.accountId)).toHaveLength(1);
  });

  it('explains the 3-key limit before it is hit, and refuses a 4th (409, nothing created)', async () => {
    const { customer, browser } = await signedIn();
    for (let i = 0; i < 3; i++) await createKey(browser, { name: `k${i}` });
    const page = await browser.get('/dashboard/keys/new');
    expect(page.html).toContain('You already hold 3 active keys');
    const refused = await browser.post('/dashboard/keys', { name: 'fourth', scopes: 'read:cheeses', expires: 'never' });
    expect(refused.status).toBe(409);
    expect(await keysOf(t, customer.accountId)).toHaveLength(3);
  });

  it('refuses a form without a CSRF token, or with another session\'s (403), and creates nothing', async () => {
    const { customer, browser } = await signedIn();
    const other = await signedIn();
    await other.browser.get('/dashboard/keys/new');
    await browser.get('/dashboard/keys/new');
    const missing = await browser.post('/dashboard/keys', { name: 'x', scopes: 'read:cheeses', expires: 'never' }, { csrf: null });
    const foreign = await browser.post('/dashboard/keys', { name: 'x', scopes: 'read:cheeses', expires: 'never' }, { csrf: other.browser.csrf! });
    expect([missing.status, foreign.status]).toEqual([403, 403]);
    expect(await keysOf(t, customer.accountId)).toHaveLength(0);
  });
});

describe('rolling and revoking', () => {
  it('rolls a key: the new one is shown once and works, the old one ends when chosen and no longer counts', async () => {
    const { customer, browser } = await signedIn();
    const { key: old } = await createKey(browser);
    for (let i = 0; i < 2; i++) await createKey(browser, { name: `k${i}` });
    const [first] = await keysOf(t, customer.accountId);
    const rollPage = await browser.get(`/dashboard/keys/${first!.id}/roll`);
    expect(rollPage.html).toContain('Old key expires');
    expect(await browser.post(`/dashboard/keys/${first!.id}/roll`, { oldKeyExpires: '3600' })).toMatchObject({ status: 303 });
    const page = await browser.get('/dashboard/keys');
    const fresh = KEY.exec(page.html)?.[1];
    expect(fresh).toMatch(/^sk_test_/);
    expect(fresh).not.toBe(old);
    for (const key of [old!, fresh!]) expect((await t.http.get('/v2/api-keys', { headers: { 'x-api-key': key } })).status).toBe(200);
    const rows = await keysOf(t, customer.accountId);
    expect(rows).toHaveLength(4);
    expect(rows[0]!.rolled_at).not.toBeNull();
    expect(rows[3]).toMatchObject({ name: 'storefront', scopes: 'read:cheeses read:orders' });
  });

  it('revokes through a confirmation: the key is refused at once', async () => {
    const { customer, browser } = await signedIn();
    const { key } = await createKey(browser);
    const [row] = await keysOf(t, customer.accountId);
    const confirm = await browser.get(`/dashboard/keys/${row!.id}/revoke`);
    expect(confirm.html).toContain('Confirm');
    expect((await browser.post(`/dashboard/keys/${row!.id}/revoke`)).status).toBe(303);
    expect((await t.http.get('/v2/api-keys', { headers: { 'x-api-key': key! } })).status).toBe(401);
    expect((await keysOf(t, customer.accountId))[0]!.revoked_at).not.toBeNull();
  });

  it('answers 404 for another account\'s key, and changes nothing', async () => {
    const owner = await signedIn();
    await createKey(owner.browser);
    const [row] = await keysOf(t, owner.customer.accountId);
    const { browser } = await signedIn();
    expect((await browser.get(`/dashboard/keys/${row!.id}/roll`)).status).toBe(404);
    expect((await browser.get(`/dashboard/keys/${row!.id}/revoke`)).status).toBe(404);
    await browser.get('/dashboard/keys');
    expect((await browser.post(`/dashboard/keys/${row!.id}/revoke`)).status).toBe(404);
    expect((await browser.post(`/dashboard/keys/${row!.id}/roll`, { oldKeyExpires: '0' })).status).toBe(404);
    expect(await keysOf(t, owner.customer.accountId)).toEqual([expect.objectContaining({ revoked_at: null, rolled_at: null })]);
  });
});

describe('live keys ask for the password again after 10 minutes', () => {
  it('asks for it, refuses a wrong one with nothing created, and creates with the right one', async () => {
    const { customer, browser } = await signedIn(live);
    // 11 minutes after the sign-in.
    liveClock.advance(11 * 60_000);
    const form = await browser.get('/dashboard/keys/new');
    expect(form.html).toContain('id="password"');
    const fields = { name: 'live one', scopes: 'read:cheeses', expires: 'never' };
    const asked = await browser.post('/dashboard/keys', fields);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain('enter your password again');
    const wrong = await browser.post('/dashboard/keys', { ...fields, password: 'not my password at all' });
    expect(wrong.status).toBe(401);
    expect(await keysOf(live, customer.accountId)).toHaveLength(0);
    const right = await browser.post('/dashboard/keys', { ...fields, password: customer.password });
    expect(right.status).toBe(303);
    const page = await browser.get('/dashboard/keys');
    expect(KEY.exec(page.html)?.[1]).toMatch(/^sk_live_/);
    expect(page.html).toContain('Live');
  });

  it('does not ask within 10 minutes of the sign-in', async () => {
    const { browser } = await signedIn(live);
    await browser.get('/dashboard/keys/new');
    expect((await browser.post('/dashboard/keys', { name: 'fresh', scopes: 'read:cheeses', expires: 'never' })).status).toBe(303);
  });
});

describe('status badges and relative times (issue 31)', () => {
  it('shows each key\'s status as a badge from identity\'s rule, and its times as "3 min ago" with the exact UTC time in <time datetime>', async () => {
    const clock = new ManualClock('2026-11-29T10:00:00.000Z');
    const timed = await createTestApp({ config: { clock } });
    try {
      const { browser } = await signedIn(timed);
      await createKey(browser, { name: 'first' });
      await createKey(browser, { name: 'second' });
      clock.advance(3 * 60_000);
      const page = await browser.get('/dashboard/keys');
      const created = /<td data-label="Created"><time datetime="([^"]+)" title="2026-11-29 10:00 UTC">3 min ago<span class="visually-hidden"> \(2026-11-29 10:00 UTC\)<\/span><\/time><\/td>/.exec(page.html);
      expect(created, page.html).not.toBeNull();
      expect(Date.parse(created![1]!)).toBe(Date.parse('2026-11-29T10:00:00.000Z'));
      expect(page.html).toContain('<td data-label="Last used">Never</td>');
      expect(page.html.match(/<span class="badge badge-ok">Active<\/span>/g)).toHaveLength(2);

      const [first, second] = [...page.html.matchAll(/href="\/dashboard\/keys\/(\d+)\/roll"/g)].map((m) => m[1]);
      expect((await browser.post(`/dashboard/keys/${second}/roll`, { oldKeyExpires: '3600' })).status).toBe(303);
      expect((await browser.post(`/dashboard/keys/${first}/revoke`, {})).status).toBe(303);
      const after = await browser.get('/dashboard/keys');
      expect(after.html).toMatch(/<span class="badge badge-warn">Rolled<\/span> works until <time datetime="[^"]+" title="2026-11-29 11:03 UTC">in 1 h</);
      expect(after.html).toMatch(/<span class="badge badge-bad">Revoked<\/span> <time datetime="[^"]+" title="2026-11-29 10:03 UTC">just now</);
    } finally {
      await timed.close();
    }
  });
});
