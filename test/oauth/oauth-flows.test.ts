import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { authorizeThroughForms, freePort } from '../helpers/oauth.js';

// The flows are driven by oauth4webapi, an OAuth client no one here wrote, over real HTTP.
let t: TestApp;
let staff: Record<string, string>;
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT = 'http://127.0.0.1:9/callback';
const PASSWORD = 'a long enough secret 4 tests';
let seq = 0;

beforeAll(async () => {
  const port = await freePort();
  ({ t, auth: staff } = await createAdminTestApp({ config: { port, publicUrl: `http://127.0.0.1:${port}` } }));
  const issuer = new URL(t.http.baseUrl);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
});
afterAll(() => t.close());

async function register(body: Record<string, unknown>): Promise<{ clientId: string; clientSecret: string | null }> {
  const res = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: 'Test app', redirectUris: [REDIRECT], ...body } });
  expect(res.status).toBe(201);
  return res.body;
}

async function customer(): Promise<{ username: string; password: string }> {
  seq++;
  const username = `oauth.cust.${seq}`;
  const res = await t.http.post('/v2/customer', { json: { username, email: `oauth${seq}@example.com`, password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace' } });
  expect(res.status).toBe(201);
  return { username, password: PASSWORD };
}

async function codeFlowUrl(clientId: string, extra: Record<string, string> = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  const params = { client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'read:cheeses read:profile', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return { url, verifier, state };
}

describe('metadata (RFC 8414)', () => {
  it('lists exactly what is served, at the root, with the issuer of this deployment', () => {
    expect(as).toMatchObject({
      issuer: t.http.baseUrl,
      authorization_endpoint: `${t.http.baseUrl}/oauth/authorize`,
      token_endpoint: `${t.http.baseUrl}/oauth/token`,
      revocation_endpoint: `${t.http.baseUrl}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'implicit', 'client_credentials', 'refresh_token'],
      response_types_supported: ['code', 'token'],
    });
  });
});

describe('authorization code with PKCE, through the login and consent pages', () => {
  it('a public client gets tokens that work on the API, refreshes with rotation, and revokes', async () => {
    const { clientId } = await register({ type: 'public', grants: ['authorization_code', 'refresh_token'], scopes: ['read:cheeses', 'read:profile', 'write:profile'] });
    const user = await customer();
    const client: oauth.Client = { client_id: clientId };
    const { url, verifier, state } = await codeFlowUrl(clientId);
    const outcome = await authorizeThroughForms(url, user.username, user.password);
    expect(outcome.status).toBe(303);
    const callback = oauth.validateAuthResponse(as, client, new URL(outcome.location!), state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), callback, REDIRECT, verifier, insecure));
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read:cheeses read:profile', expires_in: expect.any(Number) });
    expect(tokens.refresh_token).toMatch(/^ort_/);

    const me = await t.http.get(`/v2/customer/${user.username}`, { headers: bearer(tokens.access_token) });
    expect(me.status).toBe(200);
    expect((await t.http.put(`/v2/customer/${user.username}`, { headers: bearer(tokens.access_token), json: {} })).status).toBe(403); // no write:profile granted

    const rotated = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await t.http.get(`/v2/customer/${user.username}`, { headers: bearer(rotated.access_token) })).status).toBe(200);

    // The rotated-out refresh token comes back: the whole family is revoked.
    await expect(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure))).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await t.http.get(`/v2/customer/${user.username}`, { headers: bearer(rotated.access_token) })).status).toBe(401);
    await expect(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), rotated.refresh_token!, insecure))).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a code is used once: the second exchange fails and revokes the tokens of the first', async () => {
    const { clientId, clientSecret } = await register({ type: 'confidential', grants: ['authorization_code'], scopes: ['read:cheeses', 'read:profile'] });
    const user = await customer();
    const client: oauth.Client = { client_id: clientId };
    const { url, verifier, state } = await codeFlowUrl(clientId);
    const callback = oauth.validateAuthResponse(as, client, new URL((await authorizeThroughForms(url, user.username, user.password)).location!), state);
    const exchange = async () => oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(clientSecret!), callback, REDIRECT, verifier, insecure));
    const first = await exchange();
    expect(first.refresh_token).toBeUndefined(); // not registered for refresh_token
    await expect(exchange()).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await t.http.get(`/v2/customer/${user.username}`, { headers: bearer(first.access_token) })).status).toBe(401);
  });

  it('a wrong verifier, another redirect URI or a missing secret is refused at the token endpoint', async () => {
    const { clientId, clientSecret } = await register({ type: 'confidential', grants: ['authorization_code'], scopes: ['read:cheeses', 'read:profile'] });
    const user = await customer();
    const client: oauth.Client = { client_id: clientId };
    const { url, state } = await codeFlowUrl(clientId);
    const callback = oauth.validateAuthResponse(as, client, new URL((await authorizeThroughForms(url, user.username, user.password)).location!), state);
    const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(as.token_endpoint!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form) });
    const basic = { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };
    const code = callback.get('code')!;
    const wrongVerifier = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: oauth.generateRandomCodeVerifier() }, basic);
    expect([wrongVerifier.status, ((await wrongVerifier.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    const noSecret = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId });
    expect(noSecret.status).toBe(400);
    expect(['invalid_client', 'invalid_request']).toContain(((await noSecret.json()) as { error: string }).error);
    expect(noSecret.headers.get('cache-control')).toBe('no-store');
  });

  it('deny sends access_denied back with the state; a customer cannot grant admin (invalid_scope)', async () => {
    const { clientId } = await register({ type: 'public', grants: ['authorization_code'], scopes: ['read:cheeses', 'admin'] });
    const user = await customer();
    const denied = await codeFlowUrl(clientId, { scope: 'read:cheeses' });
    const back = new URL((await authorizeThroughForms(denied.url, user.username, user.password, 'deny')).location!);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'access_denied', state: denied.state, iss: t.http.baseUrl });
    const admin = await codeFlowUrl(clientId, { scope: 'admin' });
    const outcome = await authorizeThroughForms(admin.url, user.username, user.password);
    expect(Object.fromEntries(new URL(outcome.location!).searchParams)).toMatchObject({ error: 'invalid_scope', state: admin.state });
  });
});

describe('client credentials and revocation', () => {
  it('a confidential client gets a token acting as its owner, within the scopes registered', async () => {
    const { clientId, clientSecret } = await register({ type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses', 'write:cheeses'] });
    const client: oauth.Client = { client_id: clientId };
    const auth = oauth.ClientSecretBasic(clientSecret!);
    const grant = async (scope: string) => oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams({ scope }), insecure));
    const tokens = await grant('write:cheeses');
    expect(tokens.refresh_token).toBeUndefined();
    const created = await t.http.post('/v2/cheeses', { headers: bearer(tokens.access_token), json: { name: `OAuth cheese ${Date.now()}`, status: 'available' } });
    expect(created.status).toBe(201);
    await expect(grant('admin')).rejects.toMatchObject({ error: 'invalid_scope' });
    const wrong = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic('cs_wrong'), new URLSearchParams(), insecure);
    expect(wrong.status).toBe(401);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure));
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: bearer(tokens.access_token) })).status).toBe(401);
    // An unknown token is answered 200 too (RFC 7009 §2.2).
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, 'oat_unknown', insecure));
  });
});
