import { afterAll, describe, expect, it } from 'vitest';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { hiddenFields } from '../helpers/oauth.js';

/** The sign-in and consent pages are a browser's: a rate limit there is answered with a page, never JSON. */
const REDIRECT = 'http://127.0.0.1:9/cb';
const PASSWORD = 'a long enough secret 4 tests';
/** The pages' policy up to form-action (which adds the client's origin on the sign-in page). */
const CSP_HEAD = "default-src 'self';script-src 'self';style-src 'self';form-action 'self'";
const figures = (free: { perHour: number; burst: number }): RateLimitSettings => ({ enabled: true, free, pro: { perHour: 36_000, burst: 100 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 100_000, multiplier: 1 });
const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((t) => t.close())));

async function setUp(rateLimits: RateLimitSettings) {
  const { t, auth } = await createAdminTestApp({ config: { rateLimits } });
  apps.push(t);
  const res = await t.http.post('/v2/oauth-clients', { headers: auth, json: { name: 'Page test', redirectUris: [REDIRECT], type: 'public', grants: ['authorization_code'], scopes: ['read:profile'] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const { clientId } = res.body as { clientId: string };
  const url = new URL('/oauth/authorize', t.http.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', scope: 'read:profile' })) url.searchParams.set(name, value);
  return { t, url };
}

async function expectLimitPage(res: Response) {
  expect(res.status).toBe(429);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(res.headers.get('content-security-policy')).toContain(CSP_HEAD);
  expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(res.headers.get('ratelimit')).toBeTruthy();
  const html = await res.text();
  expect(html).toMatch(/^<!doctype html>/i);
  expect(html).not.toMatch(/<script|<style|style=/i);
  return { html, retryAfter };
}

describe('rate limits on the OAuth pages', () => {
  it('the address\'s bucket empty: GET and POST /oauth/authorize answer a page saying when to retry, with Retry-After', async () => {
    const { t, url } = await setUp(figures({ perHour: 36, burst: 3 }));
    const statuses = [];
    let last!: Response;
    for (let i = 0; i < 4; i++) {
      last = await fetch(url, { redirect: 'manual' });
      statuses.push(last.status);
      if (last.status !== 429) await last.text();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const { html, retryAfter } = await expectLimitPage(last);
    expect(html).toContain('Too many requests');
    expect(html).toContain(`Try again in ${retryAfter} seconds.`);
    const posted = await fetch(new URL('/oauth/authorize', t.http.baseUrl), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'step=login' });
    await expectLimitPage(posted);
    // The API itself still answers in JSON.
    const api = await t.http.get('/v2/cheeses?limit=1');
    expect(api.status).toBe(429);
    expect(api.body).toMatchObject({ code: 429, type: 'rate_limited' });
  });

  it('the login bucket exhausted through the page: 429, the sign-in page again saying when to retry, with Retry-After', async () => {
    const { t, url } = await setUp(figures({ perHour: 360_000, burst: 1000 }));
    const username = `page.${process.pid}`;
    expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD } })).status).toBe(201);
    const first = await fetch(url, { redirect: 'manual' });
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    const fields = hiddenFields(await first.text());
    const attempt = (password: string) =>
      fetch(new URL('/oauth/authorize', t.http.baseUrl), { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...fields, username, password }) });
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const res = await attempt(`guess ${i}`);
      statuses.push(res.status);
      await res.text();
    }
    const limited = await attempt(PASSWORD);
    expect([...statuses, limited.status]).toEqual([401, 401, 401, 401, 401, 429]);
    const { html, retryAfter } = await expectLimitPage(limited);
    expect(retryAfter).toBeGreaterThanOrEqual(200); // the pair's bucket: a token every 300 s
    expect(html).toContain(`try again in ${retryAfter} s`);
    expect(html).toContain('name="username"');
  });
});
