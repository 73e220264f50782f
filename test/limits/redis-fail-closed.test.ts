import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';
import { authorizeThroughForms } from '../helpers/oauth.js';
import { privateServicesAvailable, startPrivateRedis, type PrivateRedis } from '../helpers/private-services.js';

/**
 * Redis configured and then gone (killed, or hung with SIGSTOP): the login and token endpoints
 * refuse (503, Retry-After, the Error shape; a page for a browser) instead of counting guesses
 * on each instance's own buckets, every other limit fails open, and all of it resumes by itself
 * when Redis answers again. A Redis of the test's own: the machine's is never signalled.
 */
const ROOMY: RateLimitSettings = { enabled: true, free: { perHour: 360_000, burst: 1000 }, pro: { perHour: 360_000, burst: 1000 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 100_000, multiplier: 1 };
const REDIRECT = 'http://127.0.0.1:9/cb';

let redis: PrivateRedis;
let t: TestApp;
let customer: { username: string; password: string };
let authorizeUrl: URL;

beforeAll(async () => {
  if (!privateServicesAvailable) return;
  redis = await startPrivateRedis();
  const created = await createAdminTestApp({ config: { rateLimits: ROOMY, redisUrl: redis.url } });
  t = created.t;
  customer = await signUpCustomer(t);
  const client = await t.http.post('/v2/oauth-clients', { headers: created.auth, json: { name: 'Shop', type: 'public', redirectUris: [REDIRECT], grants: ['authorization_code'], scopes: ['read:profile'] } });
  expect(client.status).toBe(201);
  authorizeUrl = new URL('/oauth/authorize', t.http.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: client.body.clientId, redirect_uri: REDIRECT, scope: 'read:profile', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })) authorizeUrl.searchParams.set(name, value);
}, 30_000);
afterAll(async () => {
  await t?.close();
  await redis?.destroy();
});

const counts = () => ({ ...t.app.modules.limits.provides.counts });
const login = (password = customer.password) => t.http.post('/v2/customer/login', { json: { username: customer.username, password } });
const tokenRequest = () =>
  t.http.post('/oauth/token', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'no-such-client', client_secret: 'wrong' }).toString() });

/** Polls `attempt` until it answers `status`; returns how long that took (ms). */
async function until(status: number, attempt: () => Promise<{ status: number }>, deadlineMs = 10_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    if ((await attempt()).status === status) return Date.now() - started;
    if (Date.now() - started > deadlineMs) throw new Error(`still not ${status} after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function expectUnavailable(res: { status: number; headers: Headers; body: unknown }) {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('5');
  expect(res.body).toMatchObject({ code: 503, type: 'service_unavailable', message: expect.stringContaining('cannot check attempt limits') });
}

describe.skipIf(!privateServicesAvailable)('limits when Redis is unreachable', () => {
  it('with Redis up, logins and token requests are answered as usual', async () => {
    expect((await login()).status).toBe(200);
    const refused = await tokenRequest();
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_client' });
    // The 503 is documented where it can happen.
    const document = await t.http.get('/v2/openapi.json');
    expect(document.body.paths['/customer/login'].post.responses['503'].description).toContain('Redis');
  });

  it('a second instance on the same Redis shares the login buckets: guesses alternate, the 6th is refused', async () => {
    const other = await createTestApp({ config: { ...t.config, port: 0 } });
    // Another account: this address's pair bucket for it is spent below.
    const target = await signUpCustomer(t);
    try {
      const guesses = [];
      for (let i = 0; i < 6; i++) {
        const instance = i % 2 === 0 ? t : other;
        guesses.push((await instance.http.post('/v2/customer/login', { json: { username: target.username, password: `guess ${i}` } })).status);
      }
      expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      await other.close();
    }
  });

  it('Redis killed: logins and token requests 503, pages say so, other limits fail open; back by itself when Redis returns', async () => {
    const before = counts();
    await redis.kill();
    expectUnavailable(await login());
    expectUnavailable(await login('a wrong guess'));
    expectUnavailable(await tokenRequest());
    // Everything else is counted on this instance meanwhile (an anonymous 401 draws from its address's bucket).
    const anonymous = await t.http.get('/v2/cheeses?limit=1');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ratelimit')).toMatch(/^"anonymous";r=/);

    // The dashboard's sign-in and the OAuth sign-in page: a page, not JSON.
    const browser = new FormBrowser(t.http.baseUrl);
    const dashboard = await browser.signIn(customer.username, customer.password);
    expect(dashboard.status).toBe(503);
    expect(dashboard.headers.get('content-type')).toContain('text/html');
    expect(dashboard.headers.get('retry-after')).toBe('5');
    expect(dashboard.html).toContain('cannot check attempt limits');
    expect(browser.cookies.has('fromagerie_session')).toBe(false);
    const oauthPage = await authorizeThroughForms(authorizeUrl, customer.username, customer.password);
    expect(oauthPage.status).toBe(503);
    expect(oauthPage.html).toMatch(/^<!doctype html>/i);
    expect(oauthPage.html).toContain('cannot check attempt limits');
    expect(oauthPage.html).toContain('name="password"'); // the form again, to retry from

    const during = counts();
    expect(during.failClosed - before.failClosed).toBe(5);
    expect(during.fallbacks).toBeGreaterThan(before.fallbacks);

    await redis.start();
    const recoveredInMs = await until(200, () => login());
    console.error(`login answered again ${recoveredInMs} ms after Redis restarted`);
    expect((await tokenRequest()).status).toBe(400);
    expect((await new FormBrowser(t.http.baseUrl).signIn(customer.username, customer.password)).status).toBe(303);
    // Recovered: decisions are Redis's again, not this instance's.
    const after = counts();
    await t.http.get('/v2/cheeses?limit=1');
    expect(counts().fallbacks).toBe(after.fallbacks);
  }, 60_000);

  it('Redis hung (SIGSTOP): logins 503 within its command timeout, and resume after SIGCONT', async () => {
    expect((await login()).status).toBe(200);
    redis.pause();
    try {
      const started = Date.now();
      expectUnavailable(await login());
      console.error(`login refused ${Date.now() - started} ms into a hung Redis`);
      expect((await t.http.get('/v2/cheeses?limit=1')).status).toBe(401);
    } finally {
      redis.resume();
    }
    const recoveredInMs = await until(200, () => login());
    console.error(`login answered again ${recoveredInMs} ms after SIGCONT`);
  }, 60_000);
});
