import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type CheeseEnv } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * Local development relaxes every limit (RATE_LIMIT_MULTIPLIER, 100 there): a README
 * walk-through repeated a few times never meets a 429, and every answer still carries the
 * RateLimit fields. Production, with the same calls, does meet them. 25 sign-ups and logins:
 * over twice production's 10 per address, each hashing a password (the test's cost).
 */
const SIGN_UPS = 25;
const REDIS = process.env.TEST_REDIS_URL;
const PASSWORD = 'a long enough secret 4 tests';
const apps: TestApp[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-limits-'));
afterAll(async () => {
  await Promise.all(apps.map((t) => t.close()));
  fs.rmSync(dataDir, { recursive: true, force: true });
});
let seq = 0;

/** The configuration `npm start` would make in `env`: the default figures. */
const configFor = (env: CheeseEnv, extra: Record<string, string> = {}) =>
  loadConfig({ CHEESE_ENV: env, DATA_DIR: dataDir, APP_SECRET: 'dev-limits-test-secret-0123456789abcdef', ADMIN_PASSWORD: 'an admin password for tests', ...extra });

async function walk(env: CheeseEnv, redisUrl?: string) {
  const t = await createTestApp({ env, config: { rateLimits: configFor(env).rateLimits, redisUrl } });
  apps.push(t);
  const anonymous: { status: number; limited: boolean }[] = [];
  const record = (res: { status: number; headers: Headers }) => anonymous.push({ status: res.status, limited: Boolean(res.headers.get('ratelimit')) && Boolean(res.headers.get('ratelimit-policy')) });
  for (let i = 0; i < SIGN_UPS; i++) {
    const username = `dev.${process.pid}.${++seq}`;
    record(await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD } }));
    record(await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } }));
  }
  const headers = { 'x-api-key': await t.key(['read:cheeses'], 'customer') };
  const keyed: { status: number; limited: boolean; policy: string | null }[] = [];
  for (let i = 0; i < 150; i++) {
    const res = await t.http.get('/v2/cheeses?limit=1', { headers });
    keyed.push({ status: res.status, limited: Boolean(res.headers.get('ratelimit')), policy: res.headers.get('ratelimit-policy') });
  }
  return { anonymous, keyed };
}

describe('rate limits by environment', () => {
  it('defaults the multiplier by CHEESE_ENV: 100 in development, 10 in sandbox, 1 in production; production refuses another', () => {
    expect(configFor('development').rateLimits).toMatchObject({ enabled: true, multiplier: 100, free: { perHour: 100, burst: 10 } });
    expect(configFor('sandbox').rateLimits.multiplier).toBe(10);
    expect(configFor('production').rateLimits.multiplier).toBe(1);
    expect(configFor('development', { RATE_LIMIT_MULTIPLIER: '1' }).rateLimits.multiplier).toBe(1);
    expect(() => configFor('production', { RATE_LIMIT_MULTIPLIER: '10' })).toThrow(ConfigError);
    expect(() => configFor('production', { RATE_LIMIT_MULTIPLIER: '10' })).toThrow(/RATE_LIMIT_MULTIPLIER must be 1 in production/);
  });

  for (const store of ['local', 'redis'] as const) {
    it.skipIf(store === 'redis' && !REDIS)(`development (${store} buckets): ${SIGN_UPS} sign-ups and logins from one address and 150 calls with a new key all succeed, every one with RateLimit fields`, async () => {
      const { anonymous, keyed } = await walk('development', store === 'redis' ? REDIS : undefined);
      expect(anonymous.filter((a, i) => a.status !== (i % 2 === 0 ? 201 : 200))).toEqual([]);
      expect(anonymous.every((a) => a.limited)).toBe(true);
      expect(keyed.filter((k) => k.status !== 200)).toEqual([]);
      expect(keyed.every((k) => k.limited)).toBe(true);
      // The Free plan, a hundredfold.
      expect(keyed[0]!.policy).toBe('"free";q=10000;w=3600, "per-minute";q=100000;w=60');
    }, 120_000);
  }

  it('production, with the same calls, meets 429s (the product\'s figures)', async () => {
    const { anonymous, keyed } = await walk('production');
    expect(anonymous.map((a) => a.status)).toContain(429);
    expect(anonymous.every((a) => a.limited)).toBe(true);
    expect(keyed.slice(0, 10).every((k) => k.status === 200)).toBe(true);
    expect(keyed[10]!.status).toBe(429);
    expect(keyed[0]!.policy).toBe('"free";q=100;w=3600, "per-minute";q=1000;w=60');
  }, 120_000);
});
