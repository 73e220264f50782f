import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { authorizeThroughForms, cookieHeader, cookiesFrom, hiddenFields } from '../helpers/oauth.js';

let t: TestApp;
let staff: Record<string, string>;
const REDIRECT = 'http://127.0.0.1:9/cb';
const PASSWORD = 'a long enough secret 4 tests';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // RFC 7636 appendix B
let seq = 0;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

async function register(body: Record<string, unknown>) {
  const res = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: 'Edge <app> & co', redirectUris: [REDIRECT], ...body } });
  expect(res.status).toBe(201);
  return res.body as { clientId: string; clientSecret: string | null };
}

async function customer() {
  const username = `edge.${++seq}`;
  expect((await t.http.post('/v2/customer', { json: { username, email: `edge${seq}@example.com`, password: PASSWORD } })).status).toBe(201);
  return username;
}

function authorizeUrl(params: Record<string, string>): URL {
  const url = new URL('/oauth/authorize', t.http.baseUrl);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url;
}

const get = (url: URL, headers: Record<string, string> = {}) => fetch(url, { redirect: 'manual', headers });
const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(new URL(path, t.http.baseUrl), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields) });

describe('the authorization endpoint', () => {
  it('never redirects to an unknown client or an unregistered redirect URI: an HTML error page, under a strict CSP', async () => {
    const { clientId } = await register({ type: 'public', grants: ['authorization_code'], scopes: ['read:cheeses'] });
    for (const params of [
      { response_type: 'code', client_id: 'cl_nobody', redirect_uri: REDIRECT },
      { response_type: 'code', client_id: clientId, redirect_uri: `${REDIRECT}/other` },
      { response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:9/CB' },
    ]) {
      const res = await get(authorizeUrl(params));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self';script-src 'self';style-src 'self';form-action 'self';frame-ancestors 'none'/);
      expect(await res.text()).not.toMatch(/<script/i);
    }
  });

  it('sends other problems back to the client with the state: PKCE required of public clients, S256 only, unknown scopes, grants not registered', async () => {
    const { clientId } = await register({ type: 'public', grants: ['authorization_code'], scopes: ['read:cheeses'] });
    const cases: [Record<string, string>, string, 'query' | 'fragment'][] = [
      [{ response_type: 'code' }, 'invalid_request', 'query'],
      [{ response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'plain' }, 'invalid_request', 'query'],
      [{ response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256', scope: 'read:cheeses write:cheeses' }, 'invalid_scope', 'query'],
      [{ response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256', scope: 'cheese:eat' }, 'invalid_scope', 'query'],
      [{ response_type: 'id_token' }, 'unsupported_response_type', 'query'],
      [{ response_type: 'token' }, 'unauthorized_client', 'fragment'],
    ];
    for (const [params, error, mode] of cases) {
      const res = await get(authorizeUrl({ client_id: clientId, redirect_uri: REDIRECT, state: 'xyz 1', ...params }));
      expect(res.status, JSON.stringify(params)).toBe(302);
      const location = new URL(res.headers.get('location')!);
      const answer = new URLSearchParams(mode === 'query' ? location.search : location.hash.slice(1));
      expect(Object.fromEntries(answer), JSON.stringify(params)).toMatchObject({ error, state: 'xyz 1' });
    }
  });

  it('shows which client asks for which scopes, escaped; a wrong password stays on the login page (401)', async () => {
    const { clientId } = await register({ type: 'public', grants: ['authorization_code'], scopes: ['read:cheeses', 'read:profile'] });
    const username = await customer();
    const url = authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: CHALLENGE, code_challenge_method: 'S256', scope: 'read:profile' });
    const page = await get(url);
    const html = await page.text();
    expect(html).toContain('Edge &lt;app&gt; &amp; co');
    expect(html).toContain('read:profile');
    expect(html).not.toContain('read:cheeses');
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9");
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Lax/);
    const wrong = await form('/oauth/authorize', { ...hiddenFields(html), username, password: 'not the password' }, { cookie });
    expect(wrong.status).toBe(401);
    const again = await wrong.text();
    expect(again).toContain('Invalid username or password.');
    expect(again).not.toContain('name="decision"');
  });

  it('refuses a form without its CSRF cookie, with another browser\'s, or a consent made for another request (403)', async () => {
    const { clientId } = await register({ type: 'public', grants: ['authorization_code'], scopes: ['read:cheeses', 'read:profile'] });
    const username = await customer();
    const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: CHALLENGE, code_challenge_method: 'S256', scope: 'read:profile' };
    const page = await get(authorizeUrl(params));
    const fields = { ...hiddenFields(await page.text()), username, password: PASSWORD };
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    expect((await form('/oauth/authorize', fields)).status).toBe(403);
    const other = (await get(authorizeUrl(params))).headers.get('set-cookie')!.split(';')[0]!;
    expect((await form('/oauth/authorize', fields, { cookie: other })).status).toBe(403);
    const consent = await form('/oauth/authorize', fields, { cookie });
    expect(consent.status).toBe(200);
    // Signing in gave the browser its session cookie: the consent form is bound to it.
    const signedIn = cookieHeader(cookiesFrom(consent, cookiesFrom(page)));
    const consentFields = hiddenFields(await consent.text());
    const widened = await form('/oauth/authorize', { ...consentFields, scope: 'read:cheeses read:profile', decision: 'approve' }, { cookie: signedIn });
    expect(widened.status).toBe(403);
    expect((await form('/oauth/authorize', { ...consentFields, decision: 'approve' }, { cookie })).status).toBe(403); // without the session
    expect((await form('/oauth/authorize', { ...consentFields, decision: 'approve' }, { cookie: signedIn })).status).toBe(303);
  });
});

describe('the implicit grant (Form A), only for clients registered for it', () => {
  it('returns a token in the fragment, with the state, that works; no refresh token', async () => {
    const { clientId } = await register({ type: 'public', grants: ['implicit'], scopes: ['read:cheeses'] });
    const username = await customer();
    const outcome = await authorizeThroughForms(authorizeUrl({ response_type: 'token', client_id: clientId, redirect_uri: REDIRECT, state: 's1' }), username, PASSWORD);
    expect(outcome.status).toBe(303);
    const location = new URL(outcome.location!);
    expect(location.search).toBe('');
    const answer = Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
    expect(answer).toMatchObject({ token_type: 'Bearer', expires_in: '3600', scope: 'read:cheeses', state: 's1' });
    expect(answer.refresh_token).toBeUndefined();
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: bearer(answer.access_token!) })).status).toBe(200);
  });
});

describe('the token endpoint', () => {
  it('answers RFC 6749 §5.2 errors: repeated parameters, unsupported and unregistered grants', async () => {
    const { clientId, clientSecret } = await register({ type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] });
    const basic = { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };
    const repeated = await fetch(new URL('/oauth/token', t.http.baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic }, body: 'grant_type=client_credentials&scope=a&scope=b' });
    expect([repeated.status, ((await repeated.json()) as { error: string }).error]).toEqual([400, 'invalid_request']);
    const password = await form('/oauth/token', { grant_type: 'password', username: 'admin', password: 'x' }, basic);
    expect([password.status, ((await password.json()) as { error: string }).error]).toEqual([400, 'unsupported_grant_type']);
    const refresh = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: 'ort_x' }, basic);
    expect([refresh.status, ((await refresh.json()) as { error: string }).error]).toEqual([400, 'unauthorized_client']);
  });

  it('closing the account revokes its OAuth tokens at once', async () => {
    const { clientId, clientSecret } = await register({ type: 'confidential', grants: ['authorization_code', 'refresh_token'], scopes: ['read:profile'] });
    const username = await customer();
    const outcome = await authorizeThroughForms(authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT }), username, PASSWORD);
    const code = new URL(outcome.location!).searchParams.get('code')!;
    const basic = { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };
    const tokens = (await (await form('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, basic)).json()) as { access_token: string; refresh_token: string };
    expect((await t.http.get(`/v2/customer/${username}`, { headers: bearer(tokens.access_token) })).status).toBe(200);
    const login = (await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token;
    expect((await t.http.delete(`/v2/customer/${username}`, { headers: bearer(login) })).status).toBe(204);
    expect((await t.http.get('/v2/api-keys', { headers: bearer(tokens.access_token) })).status).toBe(401);
    const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, basic);
    expect([refreshed.status, ((await refreshed.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
  });
});
