import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';

/**
 * GET and DELETE /v2/customer/{username}/authorized-apps: the OAuth applications a customer
 * authorized (API parity with the dashboard's "Authorized apps", issue 19), on both dialects.
 */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
}, 60_000);
afterAll(() => t?.close());

const REDIRECT = 'http://127.0.0.1:9/apps';
const PASSWORD = 'authorized apps password 42';
let seq = 0;

interface Client {
  clientId: string;
  clientSecret: string;
  name: string;
}

async function registerClient(scopes = ['read:cheeses', 'read:profile', 'write:profile'], grants = ['authorization_code', 'refresh_token']): Promise<Client> {
  const name = `${String.fromCharCode(90 - (++seq % 26))} app ${seq}`;
  const res = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name, type: 'confidential', grants, scopes, redirectUris: [REDIRECT] } });
  expect(res.status).toBe(201);
  return { ...res.body, name };
}

async function customer(): Promise<{ username: string; login: Record<string, string> }> {
  const username = `apps.cust.${++seq}`;
  expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD } })).status).toBe(201);
  const login = await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } });
  expect(login.status).toBe(200);
  return { username, login: bearer(login.body.token) };
}

const basic = (client: Client) => `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
const tokenRequest = (client: Client, form: Record<string, string>) =>
  fetch(`${t.http.baseUrl}/oauth/token`, { method: 'POST', headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });

async function authorize(client: Client, username: string, scope: string): Promise<{ access_token: string; refresh_token: string }> {
  const url = new URL('/oauth/authorize', t.http.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope, state: 's' })) url.searchParams.set(name, value);
  const outcome = await authorizeThroughForms(url, username, PASSWORD);
  expect(outcome.status).toBe(303);
  const code = new URL(outcome.location!).searchParams.get('code')!;
  const response = await tokenRequest(client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string };
}

const appsPath = (username: string) => `/v2/customer/${username}/authorized-apps`;

describe('listing authorized apps', () => {
  it('lists each application once, with the scopes of all its grants in force and when it last got a token', async () => {
    const me = await customer();
    const first = await registerClient();
    const second = await registerClient(['read:cheeses']);
    const before = new Date().toISOString();
    await authorize(first, me.username, 'read:cheeses');
    await authorize(first, me.username, 'read:profile');
    await authorize(second, me.username, 'read:cheeses');
    const res = await t.http.get(appsPath(me.username), { headers: me.login });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const byName = [first, second].sort((a, b) => a.name.localeCompare(b.name));
    expect(res.body.items.map((app: { clientId: string }) => app.clientId)).toEqual(byName.map((c) => c.clientId));
    const firstApp = res.body.items.find((app: { clientId: string }) => app.clientId === first.clientId);
    expect(firstApp).toEqual({ clientId: first.clientId, name: first.name, scopes: ['read:cheeses', 'read:profile'], authorizedAt: expect.any(String), lastUsedAt: expect.any(String) });
    expect(firstApp.authorizedAt >= before).toBe(true);
    expect(firstApp.lastUsedAt >= firstApp.authorizedAt).toBe(true);
    // Another customer has none.
    const other = await customer();
    expect((await t.http.get(appsPath(other.username), { headers: other.login })).body).toEqual({ items: [] });
  });

  it('leaves out grants no longer in force: every token expired', async () => {
    const me = await customer();
    const client = await registerClient();
    const tokens = await authorize(client, me.username, 'read:cheeses');
    expect((await t.http.get(appsPath(me.username), { headers: me.login })).body.items).toHaveLength(1);
    const past = new Date(Date.now() - 1000).toISOString();
    const grants = await t.database.db.selectFrom('oauth_grants').select('id').where('account_id', '=', (await t.database.db.selectFrom('accounts').select('id').where('username', '=', me.username).executeTakeFirstOrThrow()).id).execute();
    await t.database.db.updateTable('oauth_tokens').set({ expires_at: past }).where('grant_id', 'in', grants.map((g) => g.id)).execute();
    expect((await t.http.get(appsPath(me.username), { headers: me.login })).body.items).toEqual([]);
    expect(tokens.access_token).toMatch(/^oat_/);
  });
});

describe('revoking an authorized app', () => {
  it('revokes every grant to the app and all their tokens at once: 204, then 401 with its tokens, and gone from the list', async () => {
    const me = await customer();
    const client = await registerClient();
    const kept = await registerClient();
    const one = await authorize(client, me.username, 'read:cheeses read:profile');
    const two = await authorize(client, me.username, 'read:profile');
    const other = await authorize(kept, me.username, 'read:profile');
    for (const token of [one, two, other]) expect((await t.http.get(`/v2/customer/${me.username}`, { headers: bearer(token.access_token) })).status).toBe(200);

    const revoked = await t.http.delete(`${appsPath(me.username)}/${client.clientId}`, { headers: me.login });
    expect(revoked.status).toBe(204);
    for (const token of [one, two]) expect((await t.http.get(`/v2/customer/${me.username}`, { headers: bearer(token.access_token) })).status).toBe(401);
    expect((await tokenRequest(client, { grant_type: 'refresh_token', refresh_token: one.refresh_token })).status).toBe(400);
    // The other app keeps its access.
    expect((await t.http.get(`/v2/customer/${me.username}`, { headers: bearer(other.access_token) })).status).toBe(200);
    expect((await t.http.get(appsPath(me.username), { headers: me.login })).body.items.map((app: { clientId: string }) => app.clientId)).toEqual([kept.clientId]);
    // Nothing left to revoke: 404.
    expect((await t.http.delete(`${appsPath(me.username)}/${client.clientId}`, { headers: me.login })).status).toBe(404);
  });

  it('is 404 for an app the customer never authorized, and 400 for what is no client id', async () => {
    const me = await customer();
    const client = await registerClient();
    expect((await t.http.delete(`${appsPath(me.username)}/${client.clientId}`, { headers: me.login })).status).toBe(404);
    expect((await t.http.delete(`${appsPath(me.username)}/not-a-client`, { headers: me.login })).status).toBe(400);
  });
});

describe('who may list and revoke', () => {
  it('refuses every OAuth access token, the app\'s own included (401): no application lists or revokes authorizations', async () => {
    const me = await customer();
    const client = await registerClient();
    const tokens = await authorize(client, me.username, 'read:cheeses read:profile write:profile');
    expect((await t.http.get(appsPath(me.username), { headers: bearer(tokens.access_token) })).status).toBe(401);
    expect((await t.http.delete(`${appsPath(me.username)}/${client.clientId}`, { headers: bearer(tokens.access_token) })).status).toBe(401);
    expect((await t.http.get(`/v2/customer/${me.username}`, { headers: bearer(tokens.access_token) })).status).toBe(200);
    expect((await t.http.get(appsPath(me.username), { headers: me.login })).body.items).toHaveLength(1);
  });

  it('takes the customer\'s own API key, with read:profile to list and write:profile to revoke', async () => {
    const me = await customer();
    const client = await registerClient();
    await authorize(client, me.username, 'read:cheeses');
    const readOnly = (await t.http.post('/v2/api-keys', { headers: me.login, json: { scopes: ['read:profile'] } })).body.key as string;
    expect((await t.http.get(appsPath(me.username), { headers: apiKey(readOnly) })).body.items).toHaveLength(1);
    expect((await t.http.delete(`${appsPath(me.username)}/${client.clientId}`, { headers: apiKey(readOnly) })).status).toBe(403);
    const noProfile = (await t.http.post('/v2/api-keys', { headers: me.login, json: { scopes: ['read:orders'] } })).body.key as string;
    expect((await t.http.get(appsPath(me.username), { headers: apiKey(noProfile) })).status).toBe(403);
    const writer = (await t.http.post('/v2/api-keys', { headers: me.login, json: { scopes: ['write:profile'] } })).body.key as string;
    expect((await t.http.delete(`${appsPath(me.username)}/${client.clientId}`, { headers: bearer(writer) })).status).toBe(204);
  });

  it('refuses another customer (403, nothing revoked); staff reach every customer, and a name that is no customer is 404', async () => {
    const alice = await customer();
    const bob = await customer();
    const client = await registerClient();
    const tokens = await authorize(client, alice.username, 'read:cheeses');
    expect((await t.http.get(appsPath(alice.username), { headers: bob.login })).status).toBe(403);
    expect((await t.http.delete(`${appsPath(alice.username)}/${client.clientId}`, { headers: bob.login })).status).toBe(403);
    expect((await t.http.get(appsPath('nobody.at.all'), { headers: bob.login })).status).toBe(403);
    expect((await t.http.get('/v2/cheeses', { headers: bearer(tokens.access_token) })).status).toBe(200);

    const listed = await t.http.get(appsPath(alice.username.toUpperCase()), { headers: staff });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((app: { clientId: string }) => app.clientId)).toEqual([client.clientId]);
    expect((await t.http.get(appsPath('nobody.at.all'), { headers: staff })).status).toBe(404);
    expect((await t.http.get(appsPath('admin'), { headers: staff })).status).toBe(404);
    expect((await t.http.delete(`${appsPath(alice.username)}/${client.clientId}`, { headers: staff })).status).toBe(204);
    expect((await t.http.get('/v2/cheeses', { headers: bearer(tokens.access_token) })).status).toBe(401);
  });

  it('is in the OpenAPI document with its rule', async () => {
    const paths = t.app.swagger().paths as Record<string, Record<string, { security?: Record<string, string[]>[]; description?: string }>>;
    const list = paths['/customer/{username}/authorized-apps']?.get;
    const revoke = paths['/customer/{username}/authorized-apps/{clientId}']?.delete;
    expect(list?.description).toContain('an OAuth access token is refused');
    expect(revoke?.description).toContain('every token issued under them');
    for (const operation of [list, revoke]) expect(operation!.security!.flatMap((s) => Object.keys(s)).sort()).toEqual(['api_key', 'api_key_bearer', 'bearer_auth']);
  });
});
