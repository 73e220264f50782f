import { afterAll, describe, expect, it } from 'vitest';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { HttpResponse } from '../helpers/http.js';

/** Burst 7: a handful of refusals spends it. */
const SMALL: RateLimitSettings = { enabled: true, free: { perHour: 36, burst: 7 }, pro: { perHour: 36_000, burst: 20 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1000 };
const REDIS = process.env.TEST_REDIS_URL;
const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((t) => t.close())));

const remaining = (res: HttpResponse) => Number(/;r=(\d+);/.exec(res.headers.get('ratelimit') ?? '')?.[1]);

for (const store of ['local', 'redis'] as const) {
  describe.skipIf(store === 'redis' && !REDIS)(`refused requests count against the caller (${store} buckets)`, () => {
    async function app() {
      const t = await createTestApp({ config: { rateLimits: SMALL, redisUrl: store === 'redis' ? REDIS : undefined } });
      apps.push(t);
      return { t, headers: { 'x-api-key': await t.key(['read:cheeses'], 'customer') } };
    }

    it('a 403, a 404 (no such cheese, no such route), a 405, a 400 and a 422 carry the fields and each takes a token', async () => {
      const { t, headers } = await app();
      const answers = [
        await t.http.get('/v2/cheeses?limit=1', { headers }),
        await t.http.get('/v2/orders', { headers }), // needs read:orders
        await t.http.get('/v2/cheeses/999999999', { headers }),
        await t.http.get('/v2/no-such-route', { headers }),
        await t.http.delete('/v2/cheeses', { headers }),
        await t.http.get('/v2/cheeses?limit=many', { headers }),
        await t.http.post('/v2/api-keys', { headers, json: { scopes: 'not a list' } }),
      ];
      expect(answers.map((res) => res.status)).toEqual([200, 403, 404, 404, 405, 400, 422]);
      for (const res of answers) expect(res.headers.get('ratelimit-policy')).toBe('"free";q=36;w=3600, "per-minute";q=1000;w=60');
      expect(answers.map(remaining)).toEqual([6, 5, 4, 3, 2, 1, 0]);
      expect((await t.http.get('/v2/cheeses?limit=1', { headers })).status).toBe(429);
    });

    it('once refusals have spent the burst, the next request is 429 with Retry-After, whatever it asks', async () => {
      const { t, headers } = await app();
      const statuses = [];
      for (let i = 0; i < 7; i++) statuses.push((await t.http.get(i % 2 ? '/v2/orders' : '/v2/nowhere', { headers })).status);
      expect(statuses).toEqual([404, 403, 404, 403, 404, 403, 404]);
      for (const path of ['/v2/cheeses?limit=1', '/v2/orders', '/v2/nowhere']) {
        const refused = await t.http.get(path, { headers });
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(refused.headers.get('ratelimit')).toMatch(/^"free";r=0;t=\d+$/);
      }
      // The account's budget, not the address's: anonymous traffic from here still passes.
      expect((await t.http.get('/.well-known/oauth-authorization-server')).status).toBe(200);
    });

    it('a valid credential of the wrong kind (401) counts against its account; anonymous 404s against the address', async () => {
      const { t, headers } = await app();
      const wrongKind = await t.http.get('/v2/customer/logout', { headers: { authorization: `Bearer ${headers['x-api-key']}` } });
      expect(wrongKind.status).toBe(401);
      expect(wrongKind.headers.get('ratelimit')).toMatch(/^"free";r=6;/);
      const anonymous = [];
      for (let i = 0; i < 8; i++) anonymous.push(await t.http.get(`/v2/probe-${i}`));
      expect(anonymous.map((res) => res.status)).toEqual([...Array(7).fill(404), 429]);
      expect(anonymous[0]!.headers.get('ratelimit-policy')).toBe('"anonymous";q=36;w=3600');
      expect(anonymous.map(remaining)).toEqual([6, 5, 4, 3, 2, 1, 0, 0]);
    });
  });
}
