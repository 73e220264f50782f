import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * Managing a webhook needs a credential that covers the scopes it delivers under (issue 16
 * §1): every management operation × every kind of credential, against a staff webhook
 * (registered with the admin key: `admin`) and a customer's (registered with their login:
 * read:cheeses read:orders read:profile). A fresh webhook per check, so a passing DELETE or
 * PATCH never spoils the next check.
 */
let t: TestApp;
let receiver: Receiver;
const PASSWORD = 'webhook matrix password, long';
const REDIRECT = 'http://127.0.0.1:9/matrix';
const c: Record<string, string> = {};

const OPERATIONS: [string, string, unknown][] = [
  ['PATCH', '', { url: 'http://127.0.0.1:9/elsewhere' }],
  ['DELETE', '', undefined],
  ['GET', '/deliveries', undefined],
  ['POST', '/test', undefined],
  ['POST', '/replay', undefined],
  ['POST', '/rotate-secret', undefined],
];

async function formPost(path: string, basic: string, form: Record<string, string>) {
  return fetch(`${t.http.baseUrl}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
}

beforeAll(async () => {
  t = await createTestApp();
  receiver = await new Receiver().start();
  c.admin = await t.key(['admin']);
  const sameAccountKey = async (scopes: string[]) => (await t.http.post('/v2/api-keys', { headers: bearer(c.admin!), json: { scopes } })).body.key as string;
  // Weaker credentials of the very account that registered the staff webhook.
  c.staffReader = await sameAccountKey(['read:cheeses']);
  c.staffOrders = await sameAccountKey(['read:cheeses', 'read:orders', 'write:orders']);
  for (const username of ['alice', 'bob']) {
    expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD } })).status).toBe(201);
    c[username] = (await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token;
  }
  c.aliceKey = (await t.http.post('/v2/api-keys', { headers: bearer(c.alice!), json: { scopes: ['read:cheeses', 'read:profile', 'write:profile'] } })).body.key;
  const client = (await t.http.post('/v2/oauth-clients', { headers: bearer(c.admin), json: { name: 'Hooks', type: 'confidential', grants: ['authorization_code', 'client_credentials'], scopes: ['admin', 'read:cheeses', 'read:orders', 'read:profile'], redirectUris: [REDIRECT] } })).body;
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
  const clientToken = async (scope: string) => ((await (await formPost('/oauth/token', basic, { grant_type: 'client_credentials', scope })).json()) as { access_token: string }).access_token;
  c.oauthStaff = await clientToken('admin');
  c.oauthReader = await clientToken('read:cheeses');
  const customerToken = async (username: string, scope: string) => {
    const url = new URL('/oauth/authorize', t.http.baseUrl);
    for (const [name, value] of Object.entries({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope, state: 's' })) url.searchParams.set(name, value);
    const code = new URL((await authorizeThroughForms(url, username, PASSWORD)).location!).searchParams.get('code')!;
    return ((await (await formPost('/oauth/token', basic, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).json()) as { access_token: string }).access_token;
  };
  c.aliceOAuthReader = await customerToken('alice', 'read:cheeses');
  c.aliceOAuthFull = await customerToken('alice', 'read:cheeses read:orders read:profile');
  c.bobOAuth = await customerToken('bob', 'read:cheeses read:orders read:profile');
}, 60_000);
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function register(owner: 'staff' | 'alice'): Promise<{ id: number; scopes: string[] }> {
  const credential = owner === 'staff' ? c.admin! : c.alice!;
  const res = await t.http.post('/v2/webhooks', { headers: bearer(credential), json: { url: receiver.url('/hook'), events: ['order.*', 'cheese.*'] } });
  expect(res.status).toBe(201);
  return res.body;
}

type Expect = 'pass' | 403 | 404;
/** `changing`: what PATCH and rotate-secret answer when it differs: an app's OAuth token changes only the webhooks its app made (probe 28). */
const CASES: { owner: 'staff' | 'alice'; who: string; headers: () => Record<string, string>; expect: Expect; changing?: Expect }[] = [
  { owner: 'staff', who: 'the admin key (X-API-Key)', headers: () => apiKey(c.admin!), expect: 'pass' },
  { owner: 'staff', who: 'the admin key (bearer)', headers: () => bearer(c.admin!), expect: 'pass' },
  { owner: 'staff', who: 'a read:cheeses key of the same staff account', headers: () => bearer(c.staffReader!), expect: 403 },
  { owner: 'staff', who: 'a read:orders write:orders key of the same staff account', headers: () => apiKey(c.staffOrders!), expect: 403 },
  { owner: 'staff', who: 'a staff OAuth token (admin)', headers: () => bearer(c.oauthStaff!), expect: 'pass', changing: 403 },
  { owner: 'staff', who: 'a staff OAuth token (read:cheeses only)', headers: () => bearer(c.oauthReader!), expect: 403 },
  { owner: 'staff', who: 'a customer login', headers: () => bearer(c.bob!), expect: 404 },
  { owner: 'alice', who: 'the customer\'s login', headers: () => bearer(c.alice!), expect: 'pass' },
  { owner: 'alice', who: 'the customer\'s key without read:orders', headers: () => bearer(c.aliceKey!), expect: 403 },
  { owner: 'alice', who: 'a third-party OAuth token of the customer with read:cheeses only', headers: () => bearer(c.aliceOAuthReader!), expect: 403 },
  { owner: 'alice', who: 'a third-party OAuth token of the customer with every read scope', headers: () => bearer(c.aliceOAuthFull!), expect: 'pass', changing: 403 },
  { owner: 'alice', who: 'another customer\'s login', headers: () => bearer(c.bob!), expect: 404 },
  { owner: 'alice', who: 'another customer\'s OAuth token', headers: () => bearer(c.bobOAuth!), expect: 404 },
  { owner: 'alice', who: 'staff (the admin key)', headers: () => bearer(c.admin!), expect: 'pass' },
];

describe('webhook management × credentials', () => {
  for (const [method, suffix, json] of OPERATIONS) {
    it(`${method} /webhooks/{id}${suffix}`, async () => {
      for (const check of CASES) {
        const webhook = await register(check.owner);
        const res = await t.http.request(method, `/v2/webhooks/${webhook.id}${suffix}`, { headers: check.headers(), ...(json !== undefined && { json }) });
        const what = `${method} ${suffix || '/'} on ${check.owner}'s webhook with ${check.who}: ${res.status} ${res.text.slice(0, 200)}`;
        const expected = (method === 'PATCH' || suffix === '/rotate-secret') && check.changing !== undefined ? check.changing : check.expect;
        if (expected === 'pass') expect(res.status < 300, what).toBe(true);
        else expect(res.status, what).toBe(expected);
        if (expected !== 'pass') {
          // Refused: nothing about the webhook changed.
          const after = await t.http.get(`/v2/webhooks/${webhook.id}`, { headers: bearer(c.admin!) });
          expect(after.status, what).toBe(200);
          expect(after.body.url, what).toBe(receiver.url('/hook'));
          expect(after.body.scopes, what).toEqual(webhook.scopes);
        }
        await t.http.delete(`/v2/webhooks/${webhook.id}`, { headers: bearer(c.admin!) });
      }
    });
  }
});

describe('a change of URL or events re-derives the scopes', () => {
  it('from the credential making it, on the account\'s own webhook', async () => {
    const narrow = await t.http.post('/v2/webhooks', { headers: bearer(c.staffOrders!), json: { url: receiver.url('/narrow'), events: ['order.*'] } });
    expect(narrow.body.scopes).toEqual(['read:cheeses', 'read:orders']);
    const widened = await t.http.patch(`/v2/webhooks/${narrow.body.id}`, { headers: bearer(c.admin!), json: { url: receiver.url('/moved') } });
    expect(widened.status).toBe(200);
    expect(widened.body.scopes).toEqual(['admin']);
    // A description alone re-derives nothing.
    const described = await t.http.patch(`/v2/webhooks/${narrow.body.id}`, { headers: bearer(c.admin!), json: { description: 'kept' } });
    expect(described.body.scopes).toEqual(['admin']);
    await t.http.delete(`/v2/webhooks/${narrow.body.id}`, { headers: bearer(c.admin!) });
  });

  it('staff changing a customer\'s webhook never give it their admin scope', async () => {
    const webhook = await register('alice');
    const moved = await t.http.patch(`/v2/webhooks/${webhook.id}`, { headers: bearer(c.admin!), json: { url: receiver.url('/staff-moved'), events: ['order.*'] } });
    expect(moved.status).toBe(200);
    expect(moved.body.scopes).toEqual(webhook.scopes);
    expect(moved.body.scopes).not.toContain('admin');
    const stored = await t.database.db.selectFrom('webhooks').select('scopes').where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(stored.scopes).not.toContain('admin');
    await t.http.delete(`/v2/webhooks/${webhook.id}`, { headers: bearer(c.admin!) });
  });
});
