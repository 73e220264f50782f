import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processEnvFor } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { privateServicesAvailable, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-services.js';
import { Receiver } from '../helpers/receiver.js';
import { startServer } from '../helpers/server.js';

/**
 * Issue 20: PostgreSQL stopped (`pg_ctl -m immediate`) and restarted under load must never kill
 * the process. While it is gone requests answer 503 (with Retry-After, in the error shape) and
 * readiness is 503; once it is back, requests succeed again with no restart.
 * Always on a private cluster (the shared one is never stopped), whatever TEST_DATABASE_URL says.
 */
const required = process.env.REQUIRE_HAPROXY === '1';
const describeWithCluster = privateServicesAvailable || required ? describe : describe.skip;

/** Longer than this and a request counts as hung (the issue: "never a hang over ~6 s"). */
const HANG_MS = 6_000;
const OUTAGE_MS = 2_000;
const SHIPPING = { method: 'standard', address: { line1: '1 Test Street', city: 'Lyon', country: 'FR' } };

interface Answer {
  kind: 'read' | 'orders' | 'place';
  startedAt: number;
  ms: number;
  status: number | 'hang' | 'error';
  retryAfter: string | null;
  body: unknown;
}

let cluster: PrivatePostgres;
let dataDir: string;

beforeAll(async () => {
  if (!privateServicesAvailable) return; // REQUIRE_HAPROXY=1: the test itself fails on the missing binaries
  cluster = await startPrivatePostgres();
  cluster.createDatabase('fromagerie');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-pgrestart-'));
});
afterAll(() => {
  cluster?.destroy();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function call(base: string, kind: Answer['kind'], init: RequestInit & { path: string }): Promise<Answer> {
  const startedAt = Date.now();
  try {
    const response = await fetch(`${base}${init.path}`, { ...init, signal: AbortSignal.timeout(HANG_MS) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text for the failure message
    }
    return { kind, startedAt, ms: Date.now() - startedAt, status: response.status, retryAfter: response.headers.get('retry-after'), body };
  } catch (err) {
    const hang = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    return { kind, startedAt, ms: Date.now() - startedAt, status: hang ? 'hang' : 'error', retryAfter: null, body: String(err) };
  }
}

describeWithCluster('PostgreSQL stopped and restarted under load (issue 20)', () => {
  it('keeps the process alive: 503 with Retry-After while it is gone, readiness 503 then 200, requests succeed after', async () => {
    if (!privateServicesAvailable) throw new Error('REQUIRE_HAPROXY=1 but initdb or redis-server is missing');
    const port = await freePort();
    const env = processEnvFor({ dataDir, databaseUrl: cluster.urlOf('fromagerie'), databaseSchema: undefined }, { RATE_LIMITS: 'off', LOG_LEVEL: 'warn' });
    delete env.DATABASE_SCHEMA;
    const child: ChildProcess = await startServer(env, port);
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const base = `http://127.0.0.1:${port}`;
    try {
      const login = await call(base, 'read', { path: '/v2/customer/login', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'test.customer', password: 'Gruyere and crackers 2026' }) });
      expect(login.status).toBe(200);
      // One API key of the sandbox's customer for every request (reads of the catalogue take no login token).
      const made = await call(base, 'read', { path: '/v2/api-keys', method: 'POST', headers: { authorization: `Bearer ${(login.body as { token: string }).token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['read:cheeses', 'read:orders', 'write:orders'] }) });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const auth = { 'x-api-key': (made.body as { key: string }).key };
      // Every order's event goes to a receiver that takes 200 ms to answer: attempts are in flight when PostgreSQL stops.
      const receiver = await new Receiver().start();
      receiver.on('/hook', () => ({ status: 200, delayMs: 200 }));
      const hook = await call(base, 'read', { path: '/v2/webhooks', method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url('/hook'), events: ['order.*'] }) });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const list = await call(base, 'read', { path: '/v2/cheeses?limit=50', headers: auth });
      // Orders spread over the stocked cheeses (0.1 kg each), so that no run, however fast, sells one out.
      const stocked = (list.body as { items: { id: string; stockQuantityKg: number }[] }).items.filter((c) => c.stockQuantityKg >= 20);
      expect(stocked.length).toBeGreaterThanOrEqual(10);
      let turns = 0;
      const nextCheese = () => stocked[turns++ % stocked.length]!.id;
      const place = () =>
        call(base, 'place', { path: '/v2/orders', method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body: JSON.stringify({ items: [{ cheeseId: nextCheese(), quantity_kg: 0.1 }], shipping: SHIPPING }) });

      // Six clients, each one request at a time: reads of the catalogue (cacheable), of orders (never cached), and order placement.
      const answers: Answer[] = [];
      const readiness: Array<{ at: number; status: number | 'hang' | 'error' }> = [];
      let loading = true;
      const client = async (n: number) => {
        for (let i = 0; loading; i++) {
          const turn = (n + i) % 3;
          const answer = turn === 0 ? await place() : turn === 1 ? await call(base, 'orders', { path: '/v2/orders?limit=5', headers: auth }) : await call(base, 'read', { path: `/v2/cheeses/${nextCheese()}`, headers: auth });
          answers.push(answer);
          // A client backs off a little after a refusal (and a refused connection must not spin).
          if (answer.status !== 200 && answer.status !== 201) await new Promise((r) => setTimeout(r, 50));
        }
      };
      const probe = async () => {
        while (loading) {
          const answer = await call(base, 'read', { path: '/v2/health/ready' });
          readiness.push({ at: answer.startedAt, status: answer.status });
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const load = Promise.all([...Array.from({ length: 6 }, (_, n) => client(n)), probe()]);

      // outside process: load on the app before the private PostgreSQL is stopped.
      await new Promise((r) => setTimeout(r, 1500));
      const stoppedAt = Date.now();
      cluster.stopImmediate();
      // outside process: the private PostgreSQL stays down this long.
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      await cluster.start();
      const restartedAt = Date.now();
      // Back by itself: readiness 200 again (polled, generous deadline), then a little more load.
      const deadline = Date.now() + 20_000;
      while (!readiness.some((r) => r.at > restartedAt && r.status === 200) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const readyAgainAt = readiness.find((r) => r.at > restartedAt && r.status === 200)?.at;
      // outside process: load on the app after the private PostgreSQL came back.
      await new Promise((r) => setTimeout(r, 1500));
      loading = false;
      await load;

      expect(child.exitCode, output.slice(-3000)).toBeNull();
      expect(output.includes('shutting down after a fatal error'), output.slice(-3000)).toBe(false);
      const unexpected = answers.filter((a) => !(a.status === 200 || a.status === 201 || a.status === 503));
      expect(unexpected, JSON.stringify(unexpected.slice(0, 5))).toEqual([]);
      const refused = answers.filter((a) => a.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      for (const answer of refused) {
        expect(answer.retryAfter).toMatch(/^[1-9][0-9]*$/);
        expect(answer.body).toMatchObject({ code: 503, type: expect.any(String), message: expect.any(String) });
      }
      // Readiness: 200 before the stop, 503 while the database is gone, 200 again after.
      // (Only "some" before: on a loaded machine a ping may miss readiness's 200 ms budget.)
      expect(readiness.some((r) => r.at < stoppedAt && r.status === 200)).toBe(true);
      expect(readiness.some((r) => r.at > stoppedAt && r.at < restartedAt && r.status === 503)).toBe(true);
      expect(readyAgainAt).toBeDefined();
      // Every kind of request succeeded again after the restart, without restarting the process.
      for (const kind of ['read', 'orders', 'place'] as const) {
        expect(answers.some((a) => a.kind === kind && a.startedAt > readyAgainAt! && (a.status === 200 || a.status === 201)), kind).toBe(true);
      }
      // The webhook dispatcher retries a failed cycle after a pause: it neither crashed nor spun.
      const dispatchFailures = output.split('\n').filter((line) => line.includes('webhook dispatch failed')).length;
      expect(dispatchFailures).toBeLessThanOrEqual(Math.ceil((Date.now() - stoppedAt) / 1000) + 2);
      // From here the receiver answers at once: deliveries go out oldest first, 8 at a time per
      // webhook, so at 200 ms each the hundreds of events queued by the load would take tens of
      // seconds to drain ahead of the last order's (CI saw 15 s pass on a busy machine).
      receiver.on('/hook', () => ({ status: 200 }));
      const after = await place();
      expect(after.status).toBe(201);
      // The dispatcher delivers again by itself: the last order's event reaches the receiver.
      const afterId = new RegExp(`"order_id":"${(after.body as { id: number }).id}"`);
      const deadlineForEvent = Date.now() + 15_000;
      while (!receiver.at('/hook').some((r) => r.at > restartedAt && afterId.test(r.raw)) && Date.now() < deadlineForEvent) await new Promise((r) => setTimeout(r, 100));
      await receiver.close();
      const delivered = receiver.at('/hook').filter((r) => r.at > restartedAt).length;
      const placed = answers.filter((a) => a.kind === 'place' && a.status === 201).length;
      expect(receiver.at('/hook').some((r) => r.at > restartedAt && afterId.test(r.raw)), `${placed} orders placed, ${delivered} events delivered after the restart; server output: ${output.slice(-2000)}`).toBe(true);
      const slowest = Math.max(...answers.map((a) => a.ms));
      console.error(
        `postgres-restart: ${answers.length} requests, ${refused.length} answered 503, slowest ${slowest} ms; ` +
          `ready again ${readyAgainAt! - restartedAt} ms after the restart returned`,
      );
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  }, 120_000);
});
