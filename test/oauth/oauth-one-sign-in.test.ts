import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';
import { hiddenFields } from '../helpers/oauth.js';

/** One sign-in serves the dashboard and the OAuth pages (issue 19): the same session cookie, either way round. */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(async () => t?.close());

const REDIRECT = 'http://127.0.0.1:9/cb';

async function authorizePath(): Promise<string> {
  const res = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: 'Shop', type: 'public', redirectUris: [REDIRECT], grants: ['authorization_code'], scopes: ['read:profile'] } });
  const params = new URLSearchParams({ response_type: 'code', client_id: res.body.clientId, redirect_uri: REDIRECT, scope: 'read:profile', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's' });
  return `/oauth/authorize?${params}`;
}

describe('one sign-in', () => {
  it('signed in to the dashboard, the authorization endpoint goes straight to consent, and consent works', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    const page = await browser.get(await authorizePath());
    expect(page.status).toBe(200);
    expect(page.html).toContain(`Signed in as <strong>${customer.username}</strong>`);
    expect(page.html).not.toContain('name="password"');
    const fields = hiddenFields(page.html);
    const allowed = await browser.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(allowed.status).toBe(303);
    expect(new URL(allowed.location!).searchParams.get('code')).toMatch(/./);
  });

  it('signed in on the OAuth page, the browser is signed in to the dashboard too', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    const login = await browser.get(await authorizePath());
    expect(login.html).toContain('name="password"');
    const consent = await browser.post('/oauth/authorize', { ...hiddenFields(login.html), username: customer.username, password: customer.password });
    expect(consent.status).toBe(200);
    expect(consent.html).toContain('name="decision"');
    const overview = await browser.get('/dashboard');
    expect(overview.status).toBe(200);
    expect(overview.html).toContain(customer.username);
  });

  it('a consent form is bound to its sign-in: after sign-out it is refused (403) and no code is issued', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    const page = await browser.get(await authorizePath());
    const fields = hiddenFields(page.html);
    await browser.get('/dashboard');
    await browser.post('/dashboard/logout');
    const refused = await browser.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(refused.status).toBe(403);
    expect(refused.location).toBeNull();
  });
});
