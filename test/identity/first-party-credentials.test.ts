import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';

/**
 * Issue 28 §2: a third-party token mints no first-party credential. API keys and OAuth clients
 * are made and managed with the account's own credentials only: an OAuth access token, of any
 * grant, is 403 naming the rule on every /v2/api-keys and /v2/oauth-clients operation, and
 * changes nothing.
 */
let t: TestApp;
let staff: Record<string, string>;
const PASSWORD = 'first party passphrase 42';
const REDIRECT = 'http://127.0.0.1:9/first-party';
let seq = 0;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
}, 60_000);
afterAll(() => t?.close());

async function client(grants: string[], scopes: string[]) {
  const res = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: `Third party ${++seq}`, type: 'confidential', grants, scopes, redirectUris: [REDIRECT] } });
  expect(res.status).toBe(201);
  return { clientId: res.body.clientId as string, basic: `Basic ${Buffer.from(`${res.body.clientId}:${res.body.clientSecret}`).toString('base64')}` };
}

async function token(c: { basic: string }, form: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.http.baseUrl}/oauth/token`, { method: 'POST', headers: { authorization: c.basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const keyCount = async () => Number((await t.database.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).where('revoked_at', 'is', null).executeTakeFirstOrThrow()).n);
const clientCount = async () => Number((await t.database.db.selectFrom('oauth_clients').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

async function expectRefusedEverywhere(oauth: Record<string, string>, ownKeyId: number, clientRowId: number) {
  const keysBefore = await keyCount();
  const clientsBefore = await clientCount();
  const operations: [string, string, unknown?][] = [
    ['POST', '/v2/api-keys', { scopes: ['read:profile'] }],
    ['GET', '/v2/api-keys'],
    ['DELETE', `/v2/api-keys/${ownKeyId}`],
    ['POST', `/v2/api-keys/${ownKeyId}/roll`, {}],
    ['POST', '/v2/oauth-clients', { name: 'Minted', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] }],
    ['GET', '/v2/oauth-clients'],
    ['DELETE', `/v2/oauth-clients/${clientRowId}`],
  ];
  for (const [method, path, json] of operations) {
    const res = await t.http.request(method, path, { headers: oauth, ...(json !== undefined ? { json } : {}) });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
    expect(res.body.message).toContain('an OAuth access token, whatever its grant, may not use /v2/api-keys or /v2/oauth-clients');
  }
  expect(await keyCount()).toBe(keysBefore);
  expect(await clientCount()).toBe(clientsBefore);
}

describe('an OAuth access token makes and manages no API key or OAuth client', () => {
  it('an authorization-code token of a customer: 403 on every operation, nothing made or revoked; the customer\'s own login still manages keys', async () => {
    const username = `first.party.${++seq}`;
    expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD } })).status).toBe(201);
    const login = bearer((await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token);
    const own = await t.http.post('/v2/api-keys', { headers: login, json: { scopes: ['read:profile', 'write:profile'] } });
    expect(own.status).toBe(201);
    const app = await client(['authorization_code'], ['read:profile', 'write:profile']);
    const url = new URL('/oauth/authorize', t.http.baseUrl);
    for (const [name, value] of Object.entries({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, scope: 'read:profile write:profile', state: 's' })) url.searchParams.set(name, value);
    const code = new URL((await authorizeThroughForms(url, username, PASSWORD)).location!).searchParams.get('code')!;
    const access = await token(app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    const victim = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: 'Victim', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] } });
    await expectRefusedEverywhere(bearer(access), own.body.id, victim.body.id);
    // The customer's own credential is unaffected.
    expect((await t.http.get('/v2/api-keys', { headers: login })).body.items).toHaveLength(1);
    expect((await t.http.post('/v2/api-keys', { headers: login, json: { scopes: ['read:profile'] } })).status).toBe(201);
  });

  it('a staff client-credentials token holding admin: 403 on every operation as well; staff\'s own key still registers clients', async () => {
    const app = await client(['client_credentials'], ['admin']);
    const access = await token(app, { grant_type: 'client_credentials', scope: 'admin' });
    const own = await t.http.post('/v2/api-keys', { headers: staff, json: { scopes: ['read:cheeses'] } });
    const victim = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: 'Victim 2', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] } });
    expect(victim.status).toBe(201);
    await expectRefusedEverywhere(bearer(access), own.body.id, victim.body.id);
    expect((await t.http.delete(`/v2/oauth-clients/${victim.body.id}`, { headers: staff })).status).toBe(204);
  });
});
