import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrations } from '../../src/db/migrate.js';
import { Readiness, READY_TIMEOUT_MS } from '../../src/modules/health/readiness.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  // Rate limits on with a bucket of 1: the probes must not draw from it.
  t = await createTestApp({ config: { rateLimits: { enabled: true, free: { perHour: 100, burst: 1 }, pro: { perHour: 10_000, burst: 100 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1000, multiplier: 1 } as never } });
});
afterAll(() => t.close());

describe('GET /v2/health/live and /v2/health/ready', () => {
  it('answer 200, public, never cached, never rate-limited', async () => {
    for (let i = 0; i < 5; i++) {
      for (const path of ['/v2/health/live', '/v2/health/ready']) {
        const response = await t.http.get(path);
        expect(response.status, path).toBe(200);
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(response.headers.get('ratelimit')).toBeNull();
        expect(response.body).toEqual({ status: 'ok' });
      }
    }
  });

  it('ready answers 503 when the schema is behind the code', async () => {
    const last = Object.keys(migrations).at(-1)!;
    await sql`delete from ${sql.table('kysely_migration')} where name = ${last}`.execute(t.database.db);
    try {
      expect(await new Readiness(t.database).check()).toBe('schema behind');
    } finally {
      await sql`insert into ${sql.table('kysely_migration')} (name, timestamp) values (${last}, ${new Date().toISOString()})`.execute(t.database.db);
    }
  });

  it(`ready answers 503 when the database does not answer within ${READY_TIMEOUT_MS} ms`, async () => {
    let hang = false;
    const database = { ...t.database, ping: () => (hang ? new Promise<void>(() => {}) : t.database.ping()) };
    const readiness = new Readiness(database);
    expect(await readiness.check()).toBeUndefined();
    hang = true;
    // The ping never answers: only the deadline can decide, and the test moves its timers to it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let verdict: string | undefined = 'pending';
      const checked = readiness.check().then((reason) => (verdict = reason));
      await vi.advanceTimersByTimeAsync(READY_TIMEOUT_MS - 1);
      expect(verdict).toBe('pending');
      // The deadline's timer fires; its verdict waits one real turn of the loop (setImmediate).
      await vi.advanceTimersByTimeAsync(1);
      await expect.poll(() => verdict, { timeout: 1000 }).toBe('database unreachable');
      await checked;
    } finally {
      vi.useRealTimers();
    }
    hang = false;
    expect(await readiness.check()).toBeUndefined();
  });

  it('Redis unreachable does not make an instance unready', async () => {
    const other = await createTestApp({ config: { redisUrl: 'redis://127.0.0.1:1' } });
    try {
      expect((await other.http.get('/v2/health/ready')).status).toBe(200);
      expect((await other.http.get('/v2/health/live')).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  // Last: it drains this file's app.
  it('ready answers 503 while draining; live still 200', async () => {
    t.app.modules.health.provides.readiness.drain();
    const ready = await t.http.get('/v2/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', reason: 'draining' });
    expect((await t.http.get('/v2/health/live')).status).toBe(200);
  });
});
