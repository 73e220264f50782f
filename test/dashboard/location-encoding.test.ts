import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';

/**
 * Every Location the dashboard builds from a path the request supplied (`next` of the sign-in,
 * `back` of a form) is a local path in ASCII: non-ASCII is percent-encoded, what cannot be a
 * dashboard path (another origin, control characters) falls back to /dashboard. The browser
 * ends signed in, with its cookie, and no session row is left behind without one.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const sessionCount = async (accountId: number) => (await t.database.db.selectFrom('browser_sessions').select('id').where('account_id', '=', accountId).execute()).length;

/** `next` as sent, and the Location expected. */
const VARIANTS: [string, string][] = [
  ['/dashboard/\u0100', '/dashboard/%C4%80'],
  ['/dashboard/keys?q=\u00e9t\u00e9', '/dashboard/keys?q=%C3%A9t%C3%A9'],
  ['/dashboard/webhooks?account=\u{1F9C0}#caf\u00e9', '/dashboard/webhooks?account=%F0%9F%A7%80#caf%C3%A9'],
  ['/dashboard/%C4%80', '/dashboard/%C4%80'],
  ['/dashboard/keys?q=%C3%A9', '/dashboard/keys?q=%C3%A9'],
  ['/dashboard/keys\u0001', '/dashboard'],
  ['/dashboard/keys\u007f', '/dashboard'],
  ['/dashboard/keys\r\nSet-Cookie: x=y', '/dashboard'],
  ['/dashboard/\tkeys', '/dashboard'],
  ['/dashboard/keys\u0085', '/dashboard'],
  ['//evil.example/dashboard', '/dashboard'],
  ['/\\evil.example/dashboard', '/dashboard'],
  ['/dashboard/../v2/api-keys', '/dashboard'],
  ['/dashboard/%2e%2e/v2', '/dashboard'],
  ['https://evil.example/dashboard', '/dashboard'],
  ['/dashboardx', '/dashboard'],
  ['/dashboard/keys', '/dashboard/keys'],
];

const ascii = /^[\x21-\x7e]+$/;

describe('signing in with a next path', () => {
  it('sends each variant to its encoded local path or /dashboard, with the cookie and one session row', async () => {
    const customer = await signUpCustomer(t);
    for (const [next, expected] of VARIANTS) {
      const before = await sessionCount(customer.accountId);
      const browser = new FormBrowser(t.http.baseUrl);
      await browser.get('/dashboard/login');
      const signedIn = await browser.post('/dashboard/login', { username: customer.username, password: customer.password, next });
      expect(signedIn.status, JSON.stringify(next)).toBe(303);
      expect(signedIn.location, JSON.stringify(next)).toBe(expected);
      expect(signedIn.location).toMatch(ascii);
      expect(browser.cookies.has('fromagerie_session'), JSON.stringify(next)).toBe(true);
      expect(await sessionCount(customer.accountId), JSON.stringify(next)).toBe(before + 1);
      expect((await browser.get('/dashboard')).status).toBe(200);
    }
  });

  it('shows the sign-in form with a next of any kind (the field keeps a safe path)', async () => {
    for (const [next, expected] of VARIANTS) {
      const page = await new FormBrowser(t.http.baseUrl).get(`/dashboard/login?next=${encodeURIComponent(next)}`);
      expect(page.status, JSON.stringify(next)).toBe(200);
      expect(page.html).toContain(`name="next" value="${expected.replaceAll('&', '&amp;')}"`);
    }
  });

  it('sends a browser already signed in straight to each variant, encoded', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    for (const [next, expected] of VARIANTS) {
      const page = await browser.get(`/dashboard/login?next=${encodeURIComponent(next)}`);
      expect(page.status, JSON.stringify(next)).toBe(303);
      expect(page.location, JSON.stringify(next)).toBe(expected);
    }
  });

  it('sends a signed-out visitor of a non-ASCII page to the sign-in with it as next, and back after', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    const page = await browser.get('/dashboard/webhooks?account=%C3%A9');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/dashboard/login?next=%2Fdashboard%2Fwebhooks%3Faccount%3D%25C3%25A9');
    await browser.get(page.location!);
    const next = new URL(page.location!, t.http.baseUrl).searchParams.get('next')!;
    const signedIn = await browser.post('/dashboard/login', { username: customer.username, password: customer.password, next });
    expect(signedIn.location).toBe('/dashboard/webhooks?account=%C3%A9');
  });
});

describe('the back field of a form', () => {
  it('comes back to an encoded webhooks path, or to the default', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    await browser.get('/dashboard/webhooks/dead-letters');
    for (const [back, expected] of [
      ['/dashboard/webhooks/dead-letters?account=\u00e9', '/dashboard/webhooks/dead-letters?account=%C3%A9&replayed=0'],
      ['/dashboard/webhooks/dead-letters\u0001', '/dashboard/webhooks/dead-letters?replayed=0'],
      ['//evil.example/dashboard/webhooks', '/dashboard/webhooks/dead-letters?replayed=0'],
      ['/dashboard/keys', '/dashboard/webhooks/dead-letters?replayed=0'],
    ] as const) {
      const res = await browser.post('/dashboard/webhooks/dead-letters/replay-selected', { delivery: '999999', back });
      expect(res.status, JSON.stringify(back)).toBe(303);
      expect(res.location, JSON.stringify(back)).toBe(expected);
    }
  });
});
