import { afterAll, describe, expect, it } from 'vitest';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { hiddenFields } from '../helpers/oauth.js';

/**
 * Brute-force limits with rate limits on (the plans' figures high, so that only the
 * brute-force buckets bind). Client addresses are faked with X-Forwarded-For (TRUST_PROXY).
 */
const ROOMY: RateLimitSettings = { enabled: true, free: { perHour: 360_000, burst: 1000 }, pro: { perHour: 360_000, burst: 1000 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 100_000 };
const PASSWORD = 'the owner knows this one';
const REDIS = process.env.TEST_REDIS_URL;
const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((t) => t.close())));
let seq = 0;

for (const store of ['local', 'redis'] as const) {
  describe.skipIf(store === 'redis' && !REDIS)(`login lockout (${store} buckets)`, () => {
    async function app() {
      const created = await createAdminTestApp({ config: { rateLimits: ROOMY, trustProxy: true, redisUrl: store === 'redis' ? REDIS : undefined } });
      apps.push(created.t);
      const t = created.t;
      const from = (address: string) => ({ 'x-forwarded-for': address });
      const login = (address: string, username: string, password: string) => t.http.post('/v2/customer/login', { headers: from(address), json: { username, password } });
      const owner = async () => {
        const username = `owner.${++seq}`;
        expect((await t.http.post('/v2/customer', { headers: from('192.0.2.1'), json: { username, email: `${username}@example.com`, password: PASSWORD } })).status).toBe(201);
        return username;
      };
      return { ...created, from, login, owner };
    }

    it('wrong passwords sprayed from 12 addresses do not keep the owner out of their usual address', async () => {
      const { login, owner } = await app();
      const username = await owner();
      expect((await login('10.0.0.1', username, PASSWORD)).status).toBe(200);
      const sprayed = [];
      for (let i = 1; i <= 12; i++) sprayed.push((await login(`10.66.0.${i}`, username, `guess ${i}`)).status);
      // Strangers share the username's bucket (10, then 20 an hour): the spray is held back...
      expect(sprayed).toEqual([...Array(10).fill(401), 429, 429]);
      // ...and the owner, at an address where they logged in before, is not.
      expect((await login('10.0.0.1', username, PASSWORD)).status).toBe(200);
      // The price: a new address waits with the strangers (it has no record of a success).
      const newAddress = await login('10.0.0.2', username.toUpperCase(), PASSWORD);
      expect(newAddress.status).toBe(429);
      expect(Number(newAddress.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('one address guessing is throttled after 5 (429 with Retry-After), the owner\'s own address too', async () => {
      const { login, owner } = await app();
      const username = await owner();
      expect((await login('10.0.0.1', username, PASSWORD)).status).toBe(200);
      for (const address of ['10.77.0.1', '10.0.0.1']) {
        const statuses = [];
        for (let i = 0; i < 5; i++) statuses.push((await login(address, username, `guess ${i}`)).status);
        const throttled = await login(address, username, 'guess 5');
        expect([...statuses, throttled.status]).toEqual([401, 401, 401, 401, 401, 429]);
        expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(200); // a token every 300 s
        expect(throttled.body).toMatchObject({ code: 429, type: 'rate_limited', message: expect.stringContaining('login attempts') });
      }
      // Another address is not held back by those: the username's bucket still had tokens.
      expect((await login('10.0.0.3', username, PASSWORD)).status).toBe(200);
    });

    it('successes cost nothing: the owner logs in 15 times in a row', async () => {
      const { login, owner } = await app();
      const username = await owner();
      const statuses = [];
      for (let i = 0; i < 15; i++) statuses.push((await login('10.0.0.1', username, PASSWORD)).status);
      expect(statuses).toEqual(Array(15).fill(200));
    });

    it('the OAuth sign-in page shares the buckets: a success there makes the address known', async () => {
      const { t, auth, from, login, owner } = await app();
      const username = await owner();
      const registered = await t.http.post('/v2/oauth-clients', { headers: auth, json: { name: 'Shop', type: 'public', redirectUris: ['http://127.0.0.1:9/cb'], grants: ['authorization_code'], scopes: ['read:cheeses'] } });
      const url = new URL('/oauth/authorize', t.http.baseUrl);
      for (const [name, value] of Object.entries({ response_type: 'code', client_id: registered.body.clientId, redirect_uri: 'http://127.0.0.1:9/cb', scope: 'read:cheeses', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })) url.searchParams.set(name, value);
      const page = await fetch(url, { headers: from('10.0.0.1') });
      const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
      const signIn = (address: string, password: string) => fetch(url, { method: 'POST', headers: { ...from(address), cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...hiddenFields(pageHtml), username, password }) });
      const pageHtml = await page.text();
      expect((await signIn('10.0.0.1', PASSWORD)).status).toBe(200); // the consent page
      for (let i = 1; i <= 10; i++) expect((await login(`10.66.0.${i}`, username, `guess ${i}`)).status).toBe(401);
      const stranger = await signIn('10.66.1.1', PASSWORD);
      expect(stranger.status).toBe(429);
      expect(await stranger.text()).toContain('Too many login attempts');
      expect((await login('10.0.0.1', username, PASSWORD)).status).toBe(200);
    });

    it('the token endpoint: wrong secrets for a client from many addresses do not stop the client at its address', async () => {
      const { t, auth, from } = await app();
      const registered = await t.http.post('/v2/oauth-clients', { headers: auth, json: { name: 'POS', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] } });
      const { clientId, clientSecret } = registered.body as { clientId: string; clientSecret: string };
      const token = (address: string, secret: string) =>
        fetch(new URL('/oauth/token', t.http.baseUrl), { method: 'POST', headers: { ...from(address), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }) });
      expect((await token('10.0.0.1', clientSecret)).status).toBe(200);
      const statuses = [];
      for (let i = 1; i <= 61; i++) statuses.push((await token(`10.88.0.${i}`, 'cs_wrong')).status);
      expect(statuses).toEqual([...Array(60).fill(400), 429]); // invalid_client: the secret came in the form
      expect((await token('10.0.0.1', clientSecret)).status).toBe(200);
    });
  });
}
