import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createAdminTestApp, createTestApp, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { processEnvFor } from '../helpers/database.js';
import { ManualClock } from '../../src/kernel/clock.js';

/** Small figures so that limits are reached in a few requests. */
const SMALL: RateLimitSettings = { enabled: true, free: { perHour: 36, burst: 3 }, pro: { perHour: 36_000, burst: 20 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1000 };
const apps: TestApp[] = [];
async function app(rateLimits: Partial<RateLimitSettings> = {}, options: TestAppOptions = {}) {
  const created = await createAdminTestApp({ ...options, config: { rateLimits: { ...SMALL, ...rateLimits }, ...options.config } });
  apps.push(created.t);
  return created;
}
afterAll(() => Promise.all(apps.map((t) => t.close())));

const customerKey = (t: TestApp) => t.key(['read:cheeses'], 'customer');
const burst = async (t: TestApp, headers: Record<string, string>, n: number, path = '/v2/cheeses?limit=1') => {
  const statuses: number[] = [];
  let last: Awaited<ReturnType<TestApp['http']['get']>> | undefined;
  for (let i = 0; i < n; i++) {
    last = await t.http.get(path, { headers });
    statuses.push(last.status);
  }
  return { statuses, last: last! };
};

describe('rate limits per plan', () => {
  it('every response carries RateLimit-Policy and RateLimit; over the burst, 429 with Retry-After and an Error body', async () => {
    const { t } = await app();
    const headers = { 'x-api-key': await customerKey(t) };
    const first = await t.http.get('/v2/cheeses?limit=1', { headers });
    expect(first.headers.get('ratelimit-policy')).toBe('"free";q=36;w=3600, "per-minute";q=1000;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"free";r=2;t=\d+$/);
    const { statuses, last } = await burst(t, headers, 3);
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last.body).toMatchObject({ code: 429, type: 'rate_limited', message: expect.stringContaining('retry in') });
    expect(last.headers.get('ratelimit')).toMatch(/^"free";r=0;/);
    // Another account of the same plan has its own bucket.
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': await customerKey(t) } })).status).toBe(200);
  });

  // The plan cache's 5 s pass on the app's clock, not the wall's; then the CLI, a process
  // loading the app through tsx (1.5 s on an idle machine, 7 s on a loaded 2-core one), so
  // 60 s, as the other tests that run the CLI have.
  it('staff put an account on Pro (the endpoint and the CLI); staff themselves are on Enterprise', async () => {
    const clock = new ManualClock();
    const { t, auth } = await app({}, { config: { clock } });
    const key = await customerKey(t);
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': key } })).headers.get('ratelimit-policy')).toContain('"free"');
    const username = (await t.database.db.selectFrom('api_keys as k').innerJoin('accounts as a', 'a.id', 'k.account_id').select('a.username').where('k.key_prefix', '=', key.slice(0, 16)).executeTakeFirstOrThrow()).username;
    const set = await t.http.put(`/v2/accounts/${username}/plan`, { headers: auth, json: { plan: 'pro' } });
    expect(set.body).toEqual({ username, plan: 'pro' });
    expect((await t.http.put('/v2/accounts/nobody.at.all/plan', { headers: auth, json: { plan: 'pro' } })).status).toBe(404);
    // Still the cached plan until its 5 s are up: then Pro's.
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': key } })).headers.get('ratelimit-policy')).toContain('"free"');
    clock.advance(5001);
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': key } })).headers.get('ratelimit-policy')).toContain('"pro";q=36000;w=3600');
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: auth })).headers.get('ratelimit-policy')).toBe('"enterprise";q=1000;w=1');
    const run = promisify(execFile);
    const cli = await run(process.execPath, ['bin/fromagerie.js', 'accounts', 'set-plan', '--user', username, '--plan', 'enterprise'], { env: processEnvFor({ dataDir: t.config.dataDir, databaseUrl: t.config.databaseUrl, databaseSchema: t.config.databaseSchema }) });
    expect(cli.stdout).toContain(`${username} is on the enterprise plan`);
  }, 60_000);

  it('the per-minute ceiling binds authenticated Free and Pro callers where their bucket would allow more', async () => {
    const { t } = await app({ free: { perHour: 360_000, burst: 100 }, perMinute: 2 });
    const { statuses, last } = await burst(t, { 'x-api-key': await customerKey(t) }, 3);
    expect(statuses).toEqual([200, 200, 429]);
    expect(last.headers.get('ratelimit')).toMatch(/^"per-minute";r=0;/);
  });

  it('anonymous callers share their address\'s Free budget; a refused credential draws from it too', async () => {
    const { t } = await app();
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await t.http.get('/.well-known/oauth-authorization-server')).status);
    statuses.push((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': `sk_test_${'x'.repeat(43)}` } })).status);
    statuses.push((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': `sk_test_${'y'.repeat(43)}` } })).status);
    expect(statuses).toEqual([200, 200, 401, 429]);
    // Health checks and the documentation are not limited.
    for (let i = 0; i < 5; i++) expect((await t.http.get('/v2/health')).status).toBe(200);
  });

  it('sandbox multiplies every figure by 10', async () => {
    const { t } = await app({}, { env: 'sandbox' });
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': await customerKey(t) } })).headers.get('ratelimit-policy')).toBe('"free";q=360;w=3600, "per-minute";q=10000;w=60');
  });

  it('RATE_LIMITS=off: no limit and no fields', async () => {
    const { t } = await app({ enabled: false });
    const { statuses, last } = await burst(t, { 'x-api-key': await customerKey(t) }, 5);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(last.headers.get('ratelimit')).toBeNull();
  });
});

describe('brute-force limits', () => {
  it('logins: one address against one username 5, then 429 (per username from many addresses: login-lockout.test.ts); sign-ups per address', async () => {
    const { t } = await app({ free: { perHour: 360_000, burst: 1000 } });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.http.post('/v2/customer/login', { json: { username: 'victim', password: `guess number ${i}` } })).status);
    expect(statuses).toEqual([...Array(5).fill(401), 429]);
    const signUps = [];
    for (let i = 0; i < 11; i++) signUps.push((await t.http.post('/v2/customer', { json: { username: `mass.${i}`, email: `mass${i}@example.com`, password: 'a long enough secret 4 tests' } })).status);
    expect(signUps).toEqual([...Array(10).fill(201), 429]);
  }, 60_000);
});

const REDIS = process.env.TEST_REDIS_URL;
if (!REDIS) console.error('rate-limits.test.ts: the Redis tests are skipped: set TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run them');

describe.skipIf(!REDIS)('rate limits in Redis', () => {
  it('two instances share one budget', async () => {
    const { t: first } = await app({}, { config: { redisUrl: REDIS } });
    const key = await customerKey(first);
    // A second app on the same database and the same Redis prefix.
    const second = await createTestApp({ config: { ...first.config, port: 0 } });
    apps.push(second);
    const statuses = [];
    for (const t of [first, second, first, second]) statuses.push((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': key } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe('when Redis is down', () => {
  it('requests are served at once and counted on this instance', async () => {
    const { t } = await app({}, { config: { redisUrl: 'redis://127.0.0.1:1' } });
    // Answered, and counted here: nothing waits for a Redis that refuses (no offline queue); a
    // request that did would outlast the test's timeout.
    const { statuses } = await burst(t, { 'x-api-key': await customerKey(t) }, 4);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
