import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { JumpingClock } from '../helpers/clock.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';

/** The dashboard's sign-in, session cookie, headers and CSRF (issue 19), over real HTTP on both dialects. */
let t: TestApp;
const clock = new JumpingClock();
beforeAll(async () => {
  t = await createTestApp({ config: { clock } });
});
afterAll(async () => t?.close());

const sessionRows = (accountId: number) => t.database.db.selectFrom('browser_sessions').select(['id', 'token_hash', 'last_seen_at']).where('account_id', '=', accountId).execute();

describe('signing in', () => {
  it('sends a visitor without a session to the sign-in, and back to the page asked for', async () => {
    const browser = new FormBrowser(t.http.baseUrl);
    const page = await browser.get('/dashboard/keys');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/dashboard/login?next=%2Fdashboard%2Fkeys');
    const customer = await signUpCustomer(t);
    await browser.get(page.location!);
    const signedIn = await browser.post('/dashboard/login', { username: customer.username, password: customer.password, next: '/dashboard/keys' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/dashboard/keys');
  });

  it('never sends the browser to another site after sign-in', async () => {
    const customer = await signUpCustomer(t);
    for (const next of ['//evil.example/dashboard', 'https://evil.example/', '/dashboard\\@evil.example', '/v2/api-keys']) {
      const browser = new FormBrowser(t.http.baseUrl);
      await browser.get('/dashboard/login');
      const signedIn = await browser.post('/dashboard/login', { username: customer.username, password: customer.password, next });
      expect(signedIn.location, next).toBe('/dashboard');
    }
  });

  it('keeps only a hash of the session token, in an HttpOnly SameSite=Lax cookie', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.get('/dashboard/login');
    const signedIn = await browser.post('/dashboard/login', { username: customer.username, password: customer.password });
    const cookie = signedIn.headers.getSetCookie().find((line) => line.startsWith('fromagerie_session='))!;
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//i);
    expect(cookie).not.toMatch(/; Secure/i); // PUBLIC_URL is http in tests
    const token = browser.cookies.get('fromagerie_session')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await sessionRows(customer.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    const overview = await browser.get('/dashboard');
    expect(overview.status).toBe(200);
    expect(overview.html).toContain(customer.username);
    expect(overview.html).toContain('Test environment');
  });

  it('refuses a wrong password with the form again (401) and opens no session', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.get('/dashboard/login');
    const refused = await browser.post('/dashboard/login', { username: customer.username, password: 'not the password at all' });
    expect(refused.status).toBe(401);
    expect(refused.html).toContain('Invalid username or password.');
    expect(browser.cookies.has('fromagerie_session')).toBe(false);
    expect(await sessionRows(customer.accountId)).toHaveLength(0);
  });

  it('refuses a sign-in form without a CSRF token (403) and opens no session', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.get('/dashboard/login');
    const refused = await browser.post('/dashboard/login', { username: customer.username, password: customer.password }, { csrf: null });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await sessionRows(customer.accountId)).toHaveLength(0);
  });
});

describe('the session', () => {
  it('is never a credential for /v2: the cookie alone is 401', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    for (const path of ['/v2/api-keys', `/v2/customer/${customer.username}`, '/v2/webhooks']) {
      const res = await t.http.get(path, { headers: { cookie: browser.cookieHeader() } });
      expect(res.status, path).toBe(401);
    }
  });

  it('ends with sign-out: the row goes, the cookie is cleared, the pages send to the sign-in', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    const stolen = browser.cookieHeader();
    await browser.get('/dashboard');
    const out = await browser.post('/dashboard/logout');
    expect(out.status).toBe(303);
    expect(browser.cookies.has('fromagerie_session')).toBe(false);
    expect(await sessionRows(customer.accountId)).toHaveLength(0);
    const replayed = await fetch(`${t.http.baseUrl}/dashboard`, { redirect: 'manual', headers: { cookie: stolen } });
    expect(replayed.status).toBe(303);
  });

  it('ends after 2 hours idle', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    expect((await browser.get('/dashboard')).status).toBe(200);
    clock.advance(121 * 60_000);
    expect((await browser.get('/dashboard')).status).toBe(303);
    expect(await sessionRows(customer.accountId)).toHaveLength(0);
  });

  it('ends 12 hours after sign-in even when used', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    // Used every 100 minutes (never 2 hours idle) for 11 h 40 min: still open.
    for (let step = 0; step < 7; step++) {
      clock.advance(100 * 60_000);
      expect((await browser.get('/dashboard')).status).toBe(200);
    }
    // 21 minutes later, 12 hours and a minute after the sign-in: over, though used 21 minutes ago.
    clock.advance(21 * 60_000);
    expect((await browser.get('/dashboard')).status).toBe(303);
  });

  it('ends when the password changes through the API', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    const login = await t.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } });
    const token = login.body.token as string;
    const me = await t.http.get(`/v2/customer/${customer.username}`, { headers: { authorization: `Bearer ${token}` } });
    const changed = await t.http.put(`/v2/customer/${customer.username}`, {
      headers: { authorization: `Bearer ${token}`, 'if-match': me.headers.get('etag')! },
      json: { username: me.body.username, email: me.body.email, password: 'a brand new passphrase 99', currentPassword: customer.password },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(await sessionRows(customer.accountId)).toHaveLength(0);
    expect((await browser.get('/dashboard')).status).toBe(303);
  });
});

describe('the account going', () => {
  it('ends its sessions: the cookie opens nothing after the account is deleted', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    expect((await browser.get('/dashboard')).status).toBe(200);
    const login = await t.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } });
    expect((await t.http.delete(`/v2/customer/${customer.username}`, { headers: { authorization: `Bearer ${login.body.token}` } })).status).toBe(204);
    expect(await sessionRows(customer.accountId)).toHaveLength(0);
    const after = await browser.get('/dashboard');
    expect(after.status).toBe(303);
    expect(after.location).toMatch(/^\/dashboard\/login/);
  });
});

describe('every page', () => {
  it('carries the strict CSP, no-store, same-origin referrer and nosniff', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    const pages = [await browser.get('/dashboard/login')];
    await browser.signIn(customer.username, customer.password);
    pages.push(await browser.get('/dashboard'), await browser.get('/dashboard/keys'), await browser.get('/dashboard/keys/new'), await browser.get('/dashboard/no-such-page'));
    for (const page of pages) {
      expect(page.headers.get('content-security-policy')).toBe("default-src 'self';script-src 'self';style-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none';object-src 'none'");
      expect(page.headers.get('cache-control')).toBe('private, no-store');
      expect(page.headers.get('referrer-policy')).toBe('same-origin');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
      expect(page.html).not.toMatch(/\sstyle=/); // no inline style
    }
    expect(pages.at(-1)!.status).toBe(404);
  });

  it('refuses an unsafe request sent from another site (Sec-Fetch-Site: cross-site) even with a valid token', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    await browser.get('/dashboard');
    const refused = await browser.post('/dashboard/logout', {}, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(refused.status).toBe(403);
    expect(await sessionRows(customer.accountId)).toHaveLength(1);
  });
});
