import { REFRESH_TOKEN_TTL_S } from '../../src/modules/oauth/oauth.service.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * Issue 28 §1: nothing an OAuth grant created outlives the grant. A webhook an app's access
 * token registers names the app (`oauthClientId`) and is deleted, with its deliveries, by every
 * path that ends the grant; the customer's own webhooks keep receiving.
 */
let t: TestApp;
let staff: Record<string, string>;
let receiver: Receiver;
let cheeseId: number;
let seq = 0;
const PASSWORD = 'grant bound passphrase 42';
const NEW_PASSWORD = 'another grant bound passphrase';
const REDIRECT = 'http://127.0.0.1:9/grant-bound';
const address = { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' };

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ workers: true }));
  receiver = await new Receiver().start();
  const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Grant-bound Comté', pricePerKg: 20, stockQuantityKg: 500, status: 'available' } });
  expect(cheese.status).toBe(201);
  cheeseId = cheese.body.id;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

interface Client {
  id: number;
  clientId: string;
  basic: string;
}

async function registerClient(grants: string[], scopes = ['read:orders', 'read:profile', 'write:profile']): Promise<Client> {
  const res = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: `Bound app ${++seq}`, type: 'confidential', grants, scopes, redirectUris: [REDIRECT] } });
  expect(res.status).toBe(201);
  return { id: res.body.id, clientId: res.body.clientId, basic: `Basic ${Buffer.from(`${res.body.clientId}:${res.body.clientSecret}`).toString('base64')}` };
}

async function tokenEndpoint(client: Client, form: Record<string, string>) {
  const res = await fetch(`${t.http.baseUrl}/oauth/token`, { method: 'POST', headers: { authorization: client.basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as { access_token: string; refresh_token: string } };
}

async function customer() {
  const username = `bound.${++seq}.${process.pid}`;
  expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD } })).status).toBe(201);
  const login = await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } });
  return { username, login: bearer(login.body.token as string), password: PASSWORD };
}

async function authorize(client: Client, username: string) {
  const url = new URL('/oauth/authorize', t.http.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope: 'read:orders read:profile', state: 's' })) url.searchParams.set(name, value);
  const code = new URL((await authorizeThroughForms(url, username, PASSWORD)).location!).searchParams.get('code')!;
  const tokens = await tokenEndpoint(client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
  expect(tokens.status).toBe(200);
  return tokens.body;
}

async function register(headers: Record<string, string>, path: string, events = ['order.*', 'customer.*']) {
  const res = await t.http.post('/v2/webhooks', { headers, json: { url: receiver.url(path), events } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; oauthClientId: string | null };
}

async function placeOrder(headers: Record<string, string>) {
  const res = await t.http.post('/v2/orders', { headers, json: { items: [{ cheeseId: String(cheeseId), quantity_kg: 1 }], shipping: { method: 'standard', address } } });
  expect(res.status, res.text).toBe(201);
}

const webhookRow = (id: number) => t.database.db.selectFrom('webhooks').select(['id', 'oauth_grant_id', 'oauth_client_id']).where('id', '=', id).executeTakeFirst();
const deliveriesOf = async (id: number) => Number((await t.database.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('webhook_id', '=', id).executeTakeFirstOrThrow()).n);

/**
 * A customer, an app authorized by them that registered a webhook, and the customer's own
 * webhook; both have received one order.placed, so the app's webhook is shown to work first.
 */
async function appWithWebhook() {
  const me = await customer();
  const client = await registerClient(['authorization_code', 'refresh_token']);
  const tokens = await authorize(client, me.username);
  const appPath = `/app-${++seq}`;
  const ownPath = `/own-${seq}`;
  const appHook = await register(bearer(tokens.access_token), appPath);
  expect(appHook.oauthClientId).toBe(client.clientId);
  const ownHook = await register(me.login, ownPath);
  expect(ownHook.oauthClientId).toBeNull();
  const listed = await t.http.get(`/v2/webhooks/${appHook.id}`, { headers: me.login });
  expect(listed.body.oauthClientId).toBe(client.clientId);
  await placeOrder(me.login);
  await receiver.waitFor(appPath, 1);
  await receiver.waitFor(ownPath, 1);
  return { me, client, tokens, appHook, ownHook, appPath, ownPath };
}

/** After the grant ended: the app's webhook and its deliveries are gone, and an order and a profile change reach only the customer's own webhook. */
async function expectAppWebhookGone(setup: Awaited<ReturnType<typeof appWithWebhook>>, login: Record<string, string>) {
  expect(await webhookRow(setup.appHook.id)).toBeUndefined();
  expect(await deliveriesOf(setup.appHook.id)).toBe(0);
  expect((await t.http.get(`/v2/webhooks/${setup.appHook.id}`, { headers: login })).status).toBe(404);
  const before = receiver.at(setup.appPath).length;
  const ownBefore = receiver.at(setup.ownPath).length;
  await placeOrder(login);
  expect((await t.http.put(`/v2/customer/${setup.me.username}`, { headers: login, json: { username: setup.me.username, email: `${setup.me.username}@example.com`, password: setup.me.password, firstName: `Renamed ${++seq}` } })).status).toBe(200);
  const own = await receiver.waitFor(setup.ownPath, ownBefore + 2);
  expect(own.slice(ownBefore).map((r) => JSON.parse(r.raw).type).sort()).toEqual(['customer.updated', 'order.placed']);
  expect(receiver.at(setup.appPath)).toHaveLength(before);
  expect(await webhookRow(setup.ownHook.id)).toBeDefined();
}

describe('a webhook made by an app\'s token ends with the app\'s grant', () => {
  it('the customer revokes the app (API): its webhook goes, the customer\'s own keeps receiving', async () => {
    const setup = await appWithWebhook();
    expect(await webhookRow(setup.appHook.id)).toMatchObject({ oauth_client_id: setup.client.clientId, oauth_grant_id: expect.anything() });
    expect((await t.http.delete(`/v2/customer/${setup.me.username}/authorized-apps/${setup.client.clientId}`, { headers: setup.me.login })).status).toBe(204);
    expect((await t.http.get(`/v2/customer/${setup.me.username}`, { headers: bearer(setup.tokens.access_token) })).status).toBe(401);
    await expectAppWebhookGone(setup, setup.me.login);
  });

  it('a password change ends the grant: its webhook goes', async () => {
    const setup = await appWithWebhook();
    const changed = await t.http.put(`/v2/customer/${setup.me.username}`, { headers: setup.me.login, json: { username: setup.me.username, email: `${setup.me.username}@example.com`, password: NEW_PASSWORD, currentPassword: PASSWORD } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.passwordChange.oauthGrantsRevoked).toBe(1);
    setup.me.password = NEW_PASSWORD;
    // The change is a customer.updated of its own: let it reach the customer's webhook before counting what comes after.
    await receiver.waitFor(setup.ownPath, 2);
    await expectAppWebhookGone(setup, setup.me.login);
  });

  it('reuse of a rotated refresh token revokes the grant family: its webhook goes', async () => {
    const setup = await appWithWebhook();
    const rotated = await tokenEndpoint(setup.client, { grant_type: 'refresh_token', refresh_token: setup.tokens.refresh_token });
    expect(rotated.status).toBe(200);
    expect(await webhookRow(setup.appHook.id)).toBeDefined();
    expect((await tokenEndpoint(setup.client, { grant_type: 'refresh_token', refresh_token: setup.tokens.refresh_token })).status).toBe(400);
    expect((await t.http.get(`/v2/customer/${setup.me.username}`, { headers: bearer(rotated.body.access_token) })).status).toBe(401);
    await expectAppWebhookGone(setup, setup.me.login);
  });

  it('RFC 7009 revocation of the refresh token ends the grant: its webhook goes', async () => {
    const setup = await appWithWebhook();
    const res = await fetch(`${t.http.baseUrl}/oauth/revoke`, { method: 'POST', headers: { authorization: setup.client.basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: setup.tokens.refresh_token }) });
    expect(res.status).toBe(200);
    await expectAppWebhookGone(setup, setup.me.login);
  });

  it('deleting the OAuth client deletes its grants and their webhooks', async () => {
    const setup = await appWithWebhook();
    expect((await t.http.delete(`/v2/oauth-clients/${setup.client.id}`, { headers: staff })).status).toBe(204);
    await expectAppWebhookGone(setup, setup.me.login);
  });

  it('a grant whose every token has expired ends at the next hourly run, and its webhook with it', async () => {
    const setup = await appWithWebhook();
    const grantId = (await webhookRow(setup.appHook.id))!.oauth_grant_id!;
    // The access token has expired but the refresh token can still be used: the grant lives.
    await t.runJob('oauth-token-pruning', new Date(Date.now() + 2 * 3_600_000));
    expect(await webhookRow(setup.appHook.id)).toBeDefined();
    // An hour after the refresh token expired (its expiry was 30 days away): the grant has ended.
    await t.runJob('oauth-token-pruning', new Date(Date.now() + REFRESH_TOKEN_TTL_S * 1000 + 3_600_000));
    expect(await t.database.db.selectFrom('oauth_grants').select('revoked_at').where('id', '=', grantId).executeTakeFirst()).toMatchObject({ revoked_at: expect.anything() });
    await expectAppWebhookGone(setup, setup.me.login);
  });

  it('the token pruning deletes a grant left without tokens, and its webhook with it', async () => {
    const setup = await appWithWebhook();
    const grantId = (await webhookRow(setup.appHook.id))!.oauth_grant_id!;
    const longAgo = new Date(Date.now() - 40 * 86_400_000).toISOString();
    await t.database.db.updateTable('oauth_tokens').set({ expires_at: longAgo }).where('grant_id', '=', grantId).execute();
    await t.database.db.updateTable('oauth_grants').set({ created_at: longAgo }).where('id', '=', grantId).execute();
    await t.runJob('oauth-token-pruning');
    expect(await t.database.db.selectFrom('oauth_grants').select('id').where('id', '=', grantId).executeTakeFirst()).toBeUndefined();
    await expectAppWebhookGone(setup, setup.me.login);
  });
});

describe('a client-credentials token\'s webhook is bound to its grant', () => {
  it('names the app, and goes when the token (the grant\'s only one) is revoked under RFC 7009; a staff key\'s webhook stays', async () => {
    const client = await registerClient(['client_credentials'], ['read:orders']);
    const token = (await tokenEndpoint(client, { grant_type: 'client_credentials', scope: 'read:orders' })).body.access_token;
    const hook = await register(bearer(token), `/cc-${++seq}`, ['order.*']);
    expect(hook.oauthClientId).toBe(client.clientId);
    const own = await register(staff, `/staff-${seq}`, ['order.*']);
    expect(own.oauthClientId).toBeNull();
    const res = await fetch(`${t.http.baseUrl}/oauth/revoke`, { method: 'POST', headers: { authorization: client.basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }) });
    expect(res.status).toBe(200);
    expect(await webhookRow(hook.id)).toBeUndefined();
    expect(await webhookRow(own.id)).toBeDefined();
  });
});

describe('an app\'s token changes only the webhooks its app made', () => {
  it('retargeting or rotating the secret of the customer\'s own webhook is 403, so nothing reaches the app after its grant ends', async () => {
    const setup = await appWithWebhook();
    const app = bearer(setup.tokens.access_token);
    // The customer's own webhook, made with a key of the app's scopes, so only the new rule refuses the app.
    const key = await t.http.post('/v2/api-keys', { headers: setup.me.login, json: { name: 'own', scopes: ['read:orders', 'read:profile'] } });
    expect(key.status, key.text).toBe(201);
    setup.ownHook = await register(bearer(key.body.key as string), setup.ownPath);
    const retarget = await t.http.patch(`/v2/webhooks/${setup.ownHook.id}`, { headers: app, json: { url: receiver.url(`/stolen-${++seq}`) } });
    expect(retarget.status, retarget.text).toBe(403);
    expect(retarget.body.message).toMatch(/changes only the webhooks that app made/);
    const rotate = await t.http.post(`/v2/webhooks/${setup.ownHook.id}/rotate-secret`, { headers: app, json: {} });
    expect(rotate.status, rotate.text).toBe(403);
    expect(rotate.body).not.toHaveProperty('secret');
    const own = await t.http.get(`/v2/webhooks/${setup.ownHook.id}`, { headers: setup.me.login });
    expect(own.body.url).toBe(receiver.url(setup.ownPath));
    expect(own.body.previousSecretExpiresAt).toBeNull();
    // Its own app's webhook it still manages.
    expect((await t.http.patch(`/v2/webhooks/${setup.appHook.id}`, { headers: app, json: { description: 'mine' } })).status).toBe(200);
    expect((await t.http.post(`/v2/webhooks/${setup.appHook.id}/rotate-secret`, { headers: app, json: {} })).status).toBe(200);
    // Another app of the same customer may not change the first app's webhook either.
    const other = await registerClient(['authorization_code', 'refresh_token']);
    const otherTokens = await authorize(other, setup.me.username);
    expect((await t.http.patch(`/v2/webhooks/${setup.appHook.id}`, { headers: bearer(otherTokens.access_token), json: { url: receiver.url('/other') } })).status).toBe(403);
    // The customer's own credentials still change their webhook.
    expect((await t.http.patch(`/v2/webhooks/${setup.ownHook.id}`, { headers: setup.me.login, json: { description: 'still mine' } })).status).toBe(200);
  });
});
