import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';

/**
 * Issue 16 §3: the password and e-mail change only with proof of the current password, never
 * through a third-party token; a new password ends every other login session and every OAuth
 * grant, and the answer says so and lists the API keys that stay valid.
 */
let t: TestApp;
let admin: string;
let client: { id: string; basic: string };
const PASSWORD = 'the original passphrase';
const NEW_PASSWORD = 'a completely new passphrase';
const REDIRECT = 'http://127.0.0.1:9/credentials';
let seq = 0;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.key(['admin']);
  const registered = (await t.http.post('/v2/oauth-clients', { headers: bearer(admin), json: { name: 'Third party', type: 'confidential', grants: ['authorization_code', 'refresh_token'], scopes: ['read:profile', 'write:profile'], redirectUris: [REDIRECT] } })).body;
  client = { id: registered.clientId, basic: `Basic ${Buffer.from(`${registered.clientId}:${registered.clientSecret}`).toString('base64')}` };
});
afterAll(() => t.close());

async function tokenEndpoint(form: Record<string, string>) {
  const res = await fetch(`${t.http.baseUrl}/oauth/token`, { method: 'POST', headers: { authorization: client.basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as { access_token: string; refresh_token: string; error?: string } };
}

async function customer() {
  const username = `cred.${++seq}.${process.pid}`;
  const email = `${username}@example.com`;
  expect((await t.http.post('/v2/customer', { json: { username, email, password: PASSWORD } })).status).toBe(201);
  const login = async () => (await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token as string;
  const token = await login();
  const url = new URL('/oauth/authorize', t.http.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT, scope: 'read:profile write:profile', state: 's' })) url.searchParams.set(name, value);
  const code = new URL((await authorizeThroughForms(url, username, PASSWORD)).location!).searchParams.get('code')!;
  const oauth = (await tokenEndpoint({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).body;
  const key = (await t.http.post('/v2/api-keys', { headers: bearer(token), json: { name: 'till', scopes: ['read:profile', 'write:profile'] } })).body;
  return { username, email, token, otherSession: await login(), oauth, key };
}

const put = (username: string, headers: Record<string, string>, body: Record<string, unknown>) =>
  t.http.put(`/v2/customer/${username}`, { headers, json: { username, ...body } });
const canLogIn = async (username: string, password: string) => (await t.http.post('/v2/customer/login', { json: { username, password } })).status === 200;
const emailOf = async (username: string) => (await t.http.get(`/v2/customer/${username}`, { headers: bearer(admin) })).body.email;

describe('changing the password or e-mail needs proof', () => {
  it('a bearer credential alone (login token, API key as bearer) cannot set a new password: 422 without currentPassword, 403 with a wrong one', async () => {
    const me = await customer();
    for (const headers of [bearer(me.token), bearer(me.key.key)]) {
      const missing = await put(me.username, headers, { email: me.email, password: NEW_PASSWORD });
      expect(missing.status).toBe(422);
      expect(missing.body.errors).toEqual([{ field: 'currentPassword', message: expect.any(String) }]);
      const wrong = await put(me.username, headers, { email: 'attacker@example.com', password: NEW_PASSWORD, currentPassword: 'a guessed passphrase' });
      expect(wrong.status).toBe(403);
    }
    expect(await canLogIn(me.username, PASSWORD)).toBe(true);
    expect(await canLogIn(me.username, NEW_PASSWORD)).toBe(false);
    expect(await emailOf(me.username)).toBe(me.email);
  });

  it('an e-mail change needs the current password in `password`', async () => {
    const me = await customer();
    const guessed = await put(me.username, bearer(me.token), { email: 'attacker@example.com', password: 'not the password at all' });
    expect(guessed.status).toBe(422);
    expect(await emailOf(me.username)).toBe(me.email);
    const proven = await put(me.username, bearer(me.token), { email: `new.${me.email}`, password: PASSWORD });
    expect(proven.status).toBe(200);
    expect(proven.body.email).toBe(`new.${me.email}`);
    expect(proven.body.passwordChange).toBeUndefined();
  });

  it('a third-party OAuth token never changes them, even with the right current password; other fields it may', async () => {
    const me = await customer();
    const headers = bearer(me.oauth.access_token);
    expect((await put(me.username, headers, { email: 'attacker@example.com', password: PASSWORD })).status).toBe(403);
    expect((await put(me.username, headers, { email: me.email, password: NEW_PASSWORD, currentPassword: PASSWORD })).status).toBe(403);
    expect(await emailOf(me.username)).toBe(me.email);
    expect(await canLogIn(me.username, PASSWORD)).toBe(true);
    const profile = await put(me.username, headers, { email: me.email, password: PASSWORD, firstName: 'Through the app' });
    expect(profile.status).toBe(200);
    expect(profile.body.firstName).toBe('Through the app');
  });

  it('staff set no customer\'s password without the customer\'s current one', async () => {
    const me = await customer();
    expect((await put(me.username, bearer(admin), { email: me.email, password: NEW_PASSWORD })).status).toBe(422);
    expect(await canLogIn(me.username, PASSWORD)).toBe(true);
  });
});

describe('a new password ends every other session and every grant, and says so', () => {
  it('other login sessions and OAuth tokens (access and refresh) stop; the acting session and API keys stay, listed in the answer', async () => {
    const me = await customer();
    const res = await put(me.username, bearer(me.token), { email: me.email, password: NEW_PASSWORD, currentPassword: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.passwordChange).toEqual({
      // The other login token, and the browser sign-in the OAuth consent opened (the dashboard's session).
      loginSessionsEnded: 2,
      oauthGrantsRevoked: 1,
      apiKeysStillValid: [{ id: me.key.id, name: 'till', keyPrefix: me.key.key.slice(0, 16), scopes: ['read:profile', 'write:profile'], expiresAt: me.key.expiresAt }],
    });
    expect((await t.http.get(`/v2/customer/${me.username}`, { headers: bearer(me.token) })).status).toBe(200);
    expect((await t.http.get(`/v2/customer/${me.username}`, { headers: bearer(me.otherSession) })).status).toBe(401);
    expect((await t.http.get(`/v2/customer/${me.username}`, { headers: bearer(me.oauth.access_token) })).status).toBe(401);
    const refreshed = await tokenEndpoint({ grant_type: 'refresh_token', refresh_token: me.oauth.refresh_token });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    expect((await t.http.get(`/v2/customer/${me.username}`, { headers: apiKey(me.key.key) })).status).toBe(200);
    expect(await canLogIn(me.username, NEW_PASSWORD)).toBe(true);
  });
});
