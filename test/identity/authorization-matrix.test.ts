import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';
import type { Scope } from '../../src/kernel/scopes.js';
import { ACCESS_TOKEN_TTL_S } from '../../src/modules/oauth/oauth.service.js';
import { authorizeThroughForms } from '../helpers/oauth.js';
import { ManualClock } from '../../src/kernel/clock.js';

/**
 * Every operation × every kind of credential → the exact status class. The operations come
 * from the app's own OpenAPI document, so a new operation without a row here fails the test.
 * "passes" means authentication and authorisation let the request through (what follows,
 * 2xx or a 4xx about the request itself, is other tests' business).
 */
interface Row {
  public?: true;
  /** Admitted credentials: the key in X-API-Key, the key as Bearer, a login token, an OAuth access token. */
  header?: boolean;
  bearerKey?: boolean;
  login?: boolean;
  oauth?: boolean;
  scope?: Scope;
  /** The path names a customer: only that customer (or staff) passes. */
  owned?: true;
  /** Served in sandbox and development only: production answers 404 whoever asks. */
  notInProduction?: true;
  /** Manages first-party credentials (issue 28): a valid OAuth access token, of any grant and scope, is 403. */
  firstParty?: true;
}
const OPEN: Row = { public: true };
const OWN_KEYS: Row = { header: true, bearerKey: true, login: true, oauth: true };
const KEY_MANAGEMENT: Row = { ...OWN_KEYS, firstParty: true };
const READ_ANY: Row = { header: true, bearerKey: true, login: true, oauth: true, scope: 'read:cheeses' };
const READ_BEARER: Row = { bearerKey: true, login: true, oauth: true, scope: 'read:cheeses' };
const READ_KEY: Row = { header: true, bearerKey: true, scope: 'read:cheeses' };
const WRITE: Row = { bearerKey: true, login: true, oauth: true, scope: 'write:cheeses' };
const PROFILE_READ: Row = { header: true, bearerKey: true, login: true, oauth: true, scope: 'read:profile', owned: true };
const PROFILE_WRITE: Row = { bearerKey: true, login: true, oauth: true, scope: 'write:profile', owned: true };
const STAFF: Row = { header: true, bearerKey: true, login: true, oauth: true, scope: 'admin' };
const ORDERS_READ: Row = { header: true, bearerKey: true, login: true, oauth: true, scope: 'read:orders' };
const ORDERS_WRITE: Row = { header: true, bearerKey: true, login: true, oauth: true, scope: 'write:orders' };
/** What a customer's login token holds (its role's scopes), and what the matrix's customer OAuth tokens were granted. */
const CUSTOMER_LOGIN_SCOPES: readonly string[] = ['read:cheeses', 'read:orders', 'write:orders', 'read:profile', 'write:profile', 'read:logs'];
const CUSTOMER_OAUTH_SCOPES: readonly string[] = ['read:cheeses', 'read:profile', 'write:profile'];

const ROWS: Record<string, Row> = {
  'GET /health': OPEN,
  'GET /health/live': OPEN,
  'GET /health/ready': OPEN,
  'POST /customer/login': OPEN,
  'POST /customer': OPEN,
  'GET /cheeses/{cheeseId}/images/{imageId}': OPEN,
  'GET /cheeses/{cheeseId}/images/{imageId}/thumbnail': OPEN,
  'POST /api-keys': KEY_MANAGEMENT,
  'GET /api-keys': KEY_MANAGEMENT,
  'DELETE /api-keys/{id}': KEY_MANAGEMENT,
  'POST /api-keys/{id}/roll': KEY_MANAGEMENT,
  'GET /customer/{username}/authorized-apps': { header: true, bearerKey: true, login: true, scope: 'read:profile', owned: true },
  'DELETE /customer/{username}/authorized-apps/{clientId}': { header: true, bearerKey: true, login: true, scope: 'write:profile', owned: true },
  'POST /oauth-clients': { ...STAFF, firstParty: true },
  'GET /oauth-clients': { ...STAFF, firstParty: true },
  'DELETE /oauth-clients/{id}': { ...STAFF, firstParty: true },
  'PUT /accounts/{username}/plan': STAFF,
  // Webhooks are the caller's own (another's is a 404: test/webhooks/webhooks.test.ts); what they carry follows the scopes.
  // Managing one needs a credential covering its scopes: test/webhooks/authorization-matrix-webhooks.test.ts runs every
  // management operation against real webhooks with every credential kind.
  'POST /webhooks': OWN_KEYS,
  'GET /webhooks': OWN_KEYS,
  'GET /webhooks/{id}': OWN_KEYS,
  'PATCH /webhooks/{id}': OWN_KEYS,
  'DELETE /webhooks/{id}': OWN_KEYS,
  'GET /webhooks/{id}/deliveries': OWN_KEYS,
  'GET /webhooks/{id}/deliveries/{attemptId}': OWN_KEYS,
  'GET /webhooks/dead-letters': OWN_KEYS,
  'POST /webhooks/dead-letters/replay': OWN_KEYS,
  'POST /webhooks/{id}/test': OWN_KEYS,
  'POST /webhooks/{id}/replay': OWN_KEYS,
  // The event log: what the credential's webhooks would carry (test/events).
  'GET /events': OWN_KEYS,
  'GET /events/{id}': OWN_KEYS,
  // The request log: the account's own credentials only (every credential's requests are in it).
  'GET /request-logs': { header: true, bearerKey: true, login: true, scope: 'read:logs' },
  'GET /request-logs/{requestId}': { header: true, bearerKey: true, login: true, scope: 'read:logs' },
  'POST /webhooks/{id}/rotate-secret': OWN_KEYS,
  'GET /customer/logout': { login: true },
  'GET /cheeses': READ_ANY,
  'GET /cheeses/seasonal': READ_ANY,
  'GET /cheeses/findByStatus': READ_BEARER,
  'GET /cheeses/findByTags': READ_BEARER,
  'GET /cheeses/{cheeseId}': READ_KEY,
  'GET /store/inventory': READ_KEY,
  'POST /cheeses': WRITE,
  'PUT /cheeses': WRITE,
  'POST /cheeses/{cheeseId}': WRITE,
  'DELETE /cheeses/{cheeseId}': WRITE,
  'POST /cheeses/bulk': WRITE,
  'POST /cheeses/{cheeseId}/uploadImage': WRITE,
  'GET /customer/{username}': PROFILE_READ,
  'PUT /customer/{username}': PROFILE_WRITE,
  'DELETE /customer/{username}': { login: true, scope: 'write:profile', owned: true },
  'GET /customer/{username}/addresses': PROFILE_READ,
  'POST /customer/{username}/addresses': PROFILE_WRITE,
  'PATCH /customer/{username}/addresses/{addressId}': PROFILE_WRITE,
  'DELETE /customer/{username}/addresses/{addressId}': PROFILE_WRITE,
  'GET /customer/{username}/preferences': PROFILE_READ,
  'PUT /customer/{username}/preferences': PROFILE_WRITE,
  'GET /customer/{username}/recommendations': PROFILE_READ,
  'GET /customer/{username}/subscription': PROFILE_READ,
  'PUT /customer/{username}/subscription': PROFILE_WRITE,
  'DELETE /customer/{username}/subscription': PROFILE_WRITE,
  'POST /store/order': { bearerKey: true, login: true, oauth: true, scope: 'write:orders' },
  'GET /store/order/{orderId}': { header: true, bearerKey: true, scope: 'read:orders' },
  'DELETE /store/order/{orderId}': ORDERS_WRITE,
  'POST /orders': ORDERS_WRITE,
  'GET /orders': ORDERS_READ,
  'GET /orders/{id}': ORDERS_READ,
  'PATCH /orders/{id}': ORDERS_WRITE,
  'GET /orders/{id}/tracking': ORDERS_READ,
  'POST /sandbox/orders/{id}/advance': { ...ORDERS_WRITE, notInProduction: true },
};

let dev: TestApp;
let production: TestApp;
let sandbox: TestApp;
const c: Record<string, string> = {};
const PASSWORD = 'matrix password, long enough';

async function signUpAndLogin(t: TestApp, username: string): Promise<string> {
  expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD } })).status).toBe(201);
  return (await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token;
}

/** The dev app's time: it moves when the setup moves it (the expired key). */
const devClock = new ManualClock();
beforeAll(async () => {
  [dev, production, sandbox] = await Promise.all([createTestApp({ seed: true, config: { clock: devClock } }), createTestApp({ env: 'production' }), createTestApp({ env: 'sandbox' })]);
  c.admin = await dev.key(['admin']);
  c.reader = await dev.key(['read:cheeses']);
  const revoked = await dev.http.post('/v2/api-keys', { headers: bearer(c.admin), json: { scopes: ['admin'] } });
  c.revoked = revoked.body.key;
  expect((await dev.http.delete(`/v2/api-keys/${revoked.body.id}`, { headers: bearer(c.admin) })).status).toBe(204);
  c.expired = (await dev.http.post('/v2/api-keys', { headers: bearer(c.admin), json: { scopes: ['admin'], expiresAt: new Date(devClock.now() + 1500).toISOString() } })).body.key;
  c.live = await production.key(['admin']);
  // OAuth: a client registered by staff; client-credentials tokens act as the staff account.
  const client = (await dev.http.post('/v2/oauth-clients', { headers: bearer(c.admin), json: { name: 'Matrix', type: 'confidential', grants: ['authorization_code', 'client_credentials'], scopes: ['admin', 'read:cheeses', 'read:profile', 'write:profile'], redirectUris: [REDIRECT] } })).body;
  oauthClient = { id: client.clientId, basic: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` };
  c.oauthExpired = await clientCredentials('admin');
  // An hour and 1.6 s on the dev app's clock: the OAuth token above (an hour) and the expired key
  // (1.5 s) are over; every credential below is made after, and lives.
  devClock.advance(ACCESS_TOKEN_TTL_S * 1000 + 1600);
  c.oauthStaff = await clientCredentials('admin');
  c.oauthReader = await clientCredentials('read:cheeses');
  c.oauthRevoked = await clientCredentials('admin');
  expect((await formPost('/oauth/revoke', { token: c.oauthRevoked })).status).toBe(200);
  c.sandboxTest = await sandbox.key(['admin']);
}, 60_000);
afterAll(() => Promise.all([dev?.close(), production?.close(), sandbox?.close()]));

const REDIRECT = 'http://127.0.0.1:9/matrix';
let oauthClient: { id: string; basic: string };
const formPost = (path: string, form: Record<string, string>) =>
  fetch(`${dev.http.baseUrl}${path}`, { method: 'POST', headers: { authorization: oauthClient.basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
async function clientCredentials(scope: string): Promise<string> {
  return ((await (await formPost('/oauth/token', { grant_type: 'client_credentials', scope })).json()) as { access_token: string }).access_token;
}
/** A customer's OAuth access token, through the login and consent pages. */
async function customerOAuthToken(username: string): Promise<string> {
  const url = new URL('/oauth/authorize', dev.http.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: oauthClient.id, redirect_uri: REDIRECT, scope: 'read:cheeses read:profile write:profile', state: 'm' })) url.searchParams.set(name, value);
  const outcome = await authorizeThroughForms(url, username, PASSWORD);
  const code = new URL(outcome.location!).searchParams.get('code')!;
  return ((await (await formPost('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).json()) as { access_token: string }).access_token;
}

/**
 * Operations whose passing checks end the credentials they were given (a logout, closing the
 * account) get fresh people; the others share one set, since every other request here is
 * refused before it changes anything (ids that do not exist, empty bodies): signing up and
 * logging in hash passwords, seven times per set, which dominated this file's time.
 */
const ENDS_CREDENTIALS = new Set(['GET /customer/logout', 'DELETE /customer/{username}']);
let shared: ReturnType<typeof freshPeople> | undefined;
const peopleFor = (operation: string) => (ENDS_CREDENTIALS.has(operation) ? freshPeople() : (shared ??= freshPeople()));
let people = 0;
async function freshPeople() {
  const n = ++people;
  const alice = await signUpAndLogin(dev, `alice.${n}`);
  const bob = await signUpAndLogin(dev, `bob.${n}`);
  const aliceKey = (await dev.http.post('/v2/api-keys', { headers: bearer(alice), json: { scopes: ['read:cheeses', 'read:profile', 'write:profile'] } })).body.key as string;
  const staffLogin = (await dev.http.post('/v2/customer/login', { json: { username: 'admin', password: 'test-staff-password' } })).body.token as string;
  const [aliceOAuth, bobOAuth] = await Promise.all([customerOAuthToken(`alice.${n}`), customerOAuthToken(`bob.${n}`)]);
  return { username: `alice.${n}`, alice, bob, aliceKey, staffLogin, aliceOAuth, bobOAuth };
}

function send(t: TestApp, method: string, path: string, headers: Record<string, string>, username: string) {
  const url = path.replace('{orderId}', '999999').replace('{cheeseId}', '1').replace('{imageId}', '1').replace('{id}', '999999').replace('{addressId}', '999999').replace('{username}', username);
  const write = method !== 'GET' && method !== 'DELETE';
  return t.http.request(method, `/v2${url}`, { headers: { ...headers, 'x-confirm-delete': 'true' }, ...(write ? { json: {} } : {}) });
}
const keyHeaders = (row: Row, key: string) => (row.header ? apiKey(key) : bearer(key));
const admitsKeys = (row: Row) => Boolean(row.header || row.bearerKey);
const passes = (status: number) => status !== 401 && status !== 403;

describe('authorization matrix', () => {
  it('covers every operation of the app, and only those', () => {
    const operations = Object.entries(dev.app.swagger().paths ?? {}).flatMap(([path, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual(Object.keys(ROWS).sort());
  });

  for (const [operation, row] of Object.entries(ROWS)) {
    const [method, path] = operation.split(' ') as [string, string];
    it(operation, async () => {
      const p = await peopleFor(operation);
      // Checks run in order, those that may change or end a credential last.
      const expectations: [string, TestApp, Record<string, string>, (s: number) => boolean][] = [];
      const expect401 = (what: string, t: TestApp, headers: Record<string, string>) => expectations.push([what, t, headers, (s) => s === 401]);
      const expect403 = (what: string, headers: Record<string, string>) => expectations.push([what, dev, headers, (s) => s === 403]);
      const expectPass = (what: string, t: TestApp, headers: Record<string, string>) => expectations.push([what, t, headers, passes]);

      if (row.public) {
        expectPass('no credential', dev, {});
      } else {
        expect401('no credential', dev, {});
        expect401('revoked key', dev, keyHeaders(row, c.revoked!));
        expect401('expired key', dev, keyHeaders(row, c.expired!));
        if (row.notInProduction) expectations.push(['production, where the operation does not exist', production, keyHeaders(row, c.live!), (s) => s === 404]);
        else expect401('a test key in production', production, keyHeaders(row, c.admin!));
        expect401('a live key in sandbox', sandbox, keyHeaders(row, c.live!));
        if (!admitsKeys(row)) expect401('an API key where only a login token is taken', dev, bearer(c.admin!));
        if (!row.login) expect401('a login token where only API keys are taken', dev, bearer(p.staffLogin));
        if (row.header === false || (!row.header && admitsKeys(row))) expect401('a key in X-API-Key where only bearer is taken', dev, apiKey(c.admin!));
        if (admitsKeys(row)) {
          expectPass('staff key', dev, keyHeaders(row, c.admin!));
          if (!row.notInProduction) expectPass('a live key in production', production, keyHeaders(row, c.live!));
          expectPass('a test key in sandbox', sandbox, keyHeaders(row, c.sandboxTest!));
          if (row.scope && row.scope !== 'read:cheeses') expect403('a key without the scope', keyHeaders(row, c.reader!));
        }
        if (row.login) {
          const customerHolds = row.scope === undefined || CUSTOMER_LOGIN_SCOPES.includes(row.scope);
          if (row.owned) {
            expect403('another customer\'s login', bearer(p.bob));
            if (admitsKeys(row)) expectPass('the customer\'s own key', dev, keyHeaders(row, p.aliceKey));
            expectPass('the customer\'s own login', dev, bearer(p.alice));
          } else if (customerHolds) {
            expectPass('a customer login', dev, bearer(p.bob));
          } else {
            expect403('a customer login without the scope', bearer(p.bob));
          }
          expectPass('staff login', dev, bearer(p.staffLogin));
        }
        if (row.oauth && row.firstParty) {
          expect401('a revoked OAuth token', dev, bearer(c.oauthRevoked!));
          expect401('an expired OAuth token', dev, bearer(c.oauthExpired!));
          for (const [what, token] of [['a staff OAuth token (client credentials)', c.oauthStaff!], ['an OAuth token without admin', c.oauthReader!], ['a customer OAuth token', p.bobOAuth], ['the customer\'s own OAuth token', p.aliceOAuth]] as const) {
            expect403(`${what}: no OAuth token manages first-party credentials`, bearer(token));
          }
        } else if (row.oauth) {
          expect401('a revoked OAuth token', dev, bearer(c.oauthRevoked!));
          expect401('an expired OAuth token', dev, bearer(c.oauthExpired!));
          expectPass('a staff OAuth token (client credentials)', dev, bearer(c.oauthStaff!));
          if (row.scope && row.scope !== 'read:cheeses') expect403('an OAuth token without the scope', bearer(c.oauthReader!));
          const customerHolds = row.scope === undefined || CUSTOMER_OAUTH_SCOPES.includes(row.scope);
          if (row.owned) {
            expect403('another customer\'s OAuth token', bearer(p.bobOAuth));
            expectPass('the customer\'s own OAuth token', dev, bearer(p.aliceOAuth));
          } else if (customerHolds) {
            expectPass('a customer OAuth token', dev, bearer(p.bobOAuth));
          } else {
            expect403('a customer OAuth token without the scope', bearer(p.bobOAuth));
          }
        } else {
          expect401('an OAuth token where the operation does not take OAuth', dev, bearer(c.oauthStaff!));
        }
      }
      for (const [what, t, headers, ok] of expectations) {
        const { status } = await send(t, method, path, headers, p.username);
        expect(ok(status), `${operation}: ${what} answered ${status}`).toBe(true);
      }
    });
  }
});
