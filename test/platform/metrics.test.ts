import net from 'node:net';
import os from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { startJobs } from '../../src/jobs.js';
import { createMetricsModule, startMetricsServer, type BacklogSources } from '../../src/modules/metrics/metrics.module.js';
import { OutboxConsumerRepository } from '../../src/modules/outbox/outbox-consumer.repository.js';
import { DeliveryStatusRepository } from '../../src/modules/webhooks/delivery-status.repository.js';
import { createAdminTestApp } from '../helpers/app.js';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { Receiver } from '../helpers/receiver.js';
import { startServer } from '../helpers/server.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The backlog gauges' sources as src/modules.ts wires them: the outbox's and webhooks' own reads. */
function backlogOf(database: Database): BacklogSources {
  return { outbox: new OutboxConsumerRepository(database.db, 'development'), deliveries: new DeliveryStatusRepository(database.db) };
}

/** The samples of the Prometheus text format (comments skipped). */
function parse(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) return [];
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    return [{ name: match[1]!, labels, value: Number(match[3]) }];
  });
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when none. */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = parse(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(found.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return found[0]?.value;
}

/** Polls `read` until `done` holds (or fails after `timeoutMs`), returning the last text. */
async function until(read: () => Promise<string>, done: (text: string) => boolean, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await read();
    if (done(text)) return text;
    if (Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A connection's outcome: `connected`, or the error code (`ECONNREFUSED`). */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(3000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** An address of this machine that is not loopback, to knock on a loopback-only port from. */
const outsideAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

const REQUEST_COUNT = 'fromagerie_http_request_duration_seconds_count';

describe(`the server process serves /metrics on METRICS_PORT (${DIALECT})`, () => {
  let storage: TestStorage;
  let server: ChildProcess;
  let port: number;
  let metricsPort: number;
  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };
  const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`);

  beforeAll(async () => {
    storage = await createTestStorage();
    [port, metricsPort] = [await freePort(), await freePort()];
    // Anonymous callers get 5 requests, so that refusals (429) come quickly.
    const env = processEnvFor(storage, { METRICS_PORT: String(metricsPort), RATE_LIMIT_MULTIPLIER: '1', RATE_LIMIT_FREE_BURST: '5', RATE_LIMIT_FREE_PER_HOUR: '5' });
    server = await startServer(env, port);
  }, 90_000);
  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await storage?.dispose();
  });

  it('answers in the Prometheus text format on its port, and the public port does not serve it (404)', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toMatch(/^# HELP /m);
    const publicMetrics = await get('/metrics');
    expect(publicMetrics.status).toBe(404);
    expect(await publicMetrics.json()).toMatchObject({ code: 404, type: 'not_found' });
    expect((await fetch(`http://127.0.0.1:${metricsPort}/v2/health`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('counts a request by its route pattern and status', async () => {
    const labels = { method: 'GET', route: '/v2/health', status: '200' };
    const before = valueOf(await scrape(), REQUEST_COUNT, labels) ?? 0;
    expect((await get('/v2/health')).status).toBe(200);
    const after = await until(scrape, (text) => valueOf(text, REQUEST_COUNT, labels) === before + 1);
    expect(valueOf(after, REQUEST_COUNT, labels)).toBe(before + 1);
    expect(valueOf(after, 'fromagerie_http_request_duration_seconds_bucket', { ...labels, le: '5' })).toBe(before + 1);
  });

  it('keeps labels bounded: 50 cheese URLs are one route, 50 unknown paths one `unmatched`', async () => {
    for (let i = 0; i < 50; i++) await get(`/v2/cheeses/${1000 + i}`);
    for (let i = 0; i < 50; i++) await get(`/no-such-page-${i}`);
    const text = await scrape();
    const routes = new Set(parse(text).filter((s) => s.name === REQUEST_COUNT).map((s) => s.labels.route));
    expect([...routes].filter((route) => route!.includes('cheeses'))).toEqual(['/v2/cheeses/:cheeseId']);
    expect(text).not.toContain('/v2/cheeses/1000');
    expect(text).not.toContain('no-such-page');
    const cheeseRequests = parse(text).filter((s) => s.name === REQUEST_COUNT && s.labels.route === '/v2/cheeses/:cheeseId').reduce((sum, s) => sum + s.value, 0);
    expect(cheeseRequests).toBe(50);
    const unmatched = parse(text).filter((s) => s.name === REQUEST_COUNT && s.labels.route === 'unmatched').reduce((sum, s) => sum + s.value, 0);
    expect(unmatched).toBeGreaterThanOrEqual(50);
  });

  it('counts rate-limit refusals (429) by route', async () => {
    const labels = { route: '/v2/cheeses' };
    const before = valueOf(await scrape(), 'fromagerie_rate_limit_refusals_total', labels) ?? 0;
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await get('/v2/cheeses')).status);
    const refused = statuses.filter((status) => status === 429).length;
    expect(refused).toBeGreaterThan(0);
    const text = await until(scrape, (t) => valueOf(t, 'fromagerie_rate_limit_refusals_total', labels) === before + refused);
    expect(valueOf(text, 'fromagerie_rate_limit_refusals_total', labels)).toBe(before + refused);
  });

  it('has the job, backlog, webhook, event-loop and memory metrics (and the pool on PostgreSQL)', async () => {
    // The jobs run once at start: the order lifecycle's first run is counted.
    const text = await until(scrape, (t) => (valueOf(t, 'fromagerie_job_runs_total', { job: 'order-lifecycle', outcome: 'ok' }) ?? 0) >= 1);
    expect(valueOf(text, 'fromagerie_job_runs_total', { job: 'order-lifecycle', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'fromagerie_job_duration_seconds_count', { job: 'order-lifecycle' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'fromagerie_backlog_query_success')).toBe(1);
    expect(valueOf(text, 'fromagerie_outbox_undispatched_events')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'fromagerie_outbox_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'fromagerie_webhook_deliveries', { state: 'pending' })).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'fromagerie_webhook_deliveries', { state: 'dead' })).toBe(0);
    expect(valueOf(text, 'fromagerie_webhook_deliveries_due')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'fromagerie_webhook_oldest_due_seconds')).toBeGreaterThanOrEqual(0);
    expect(text).toContain('# TYPE fromagerie_webhook_attempts_total counter');
    expect(valueOf(text, 'fromagerie_webhook_attempt_duration_seconds_count')).toBe(0);
    expect(text).toContain('# TYPE fromagerie_rate_limit_refusals_total counter');
    expect(valueOf(text, 'fromagerie_rate_limit_fallbacks_total')).toBe(0);
    expect(valueOf(text, 'fromagerie_rate_limit_fail_closed_total')).toBe(0);
    expect(valueOf(text, 'nodejs_eventloop_delay_max_seconds')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'nodejs_eventloop_delay_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(valueOf(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(1_000_000);
    expect(valueOf(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    if (DIALECT === 'postgres') {
      expect(valueOf(text, 'fromagerie_db_pool_max_connections')).toBe(10);
      const open = (valueOf(text, 'fromagerie_db_pool_connections', { state: 'idle' }) ?? 0) + (valueOf(text, 'fromagerie_db_pool_connections', { state: 'busy' }) ?? 0);
      expect(open).toBeGreaterThanOrEqual(1);
      expect(valueOf(text, 'fromagerie_db_pool_waiting')).toBeGreaterThanOrEqual(0);
      expect(valueOf(text, 'fromagerie_db_pool_acquire_seconds_count')).toBeGreaterThan(0);
    } else {
      // SQLite has one connection and no pool: nothing to report (docs/metrics.md).
      expect(text).not.toContain('fromagerie_db_pool_');
    }
  });

  it.skipIf(!outsideAddress)('is bound to loopback: a connection to another address of this machine is refused', async () => {
    expect(await tryConnect('127.0.0.1', metricsPort)).toBe('connected');
    expect(await tryConnect(outsideAddress!, metricsPort)).toBe('ECONNREFUSED');
  });
});

describe('the metrics server', () => {
  it('binds 127.0.0.1 when told so, and answers nothing but /metrics', async () => {
    const storage = await createTestStorage();
    const database = openDatabase({ dataDir: storage.dataDir });
    const sources = backlogOf(database);
    const metrics = createMetricsModule({ database, backlog: sources });
    metrics.wire({ deliveries: sources.deliveries });
    const server = await startMetricsServer(metrics.provides, { port: 0, host: '127.0.0.1' });
    try {
      expect(server.address.address).toBe('127.0.0.1');
      if (outsideAddress) expect(await tryConnect(outsideAddress, server.address.port)).toBe('ECONNREFUSED');
      expect((await fetch(`http://127.0.0.1:${server.address.port}/metrics?x=1`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${server.address.port}/`)).status).toBe(404);
    } finally {
      await server.close();
      metrics.provides.close();
      await database.close();
      await storage.dispose();
    }
  });
});

describe(`metrics of one app (${DIALECT})`, () => {
  it('reports the outbox lag: an event not yet fanned out is counted, with its age', async () => {
    const { t, auth } = await createAdminTestApp();
    try {
      const created = await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Metric Morbier', pricePerKg: 20, stockQuantityKg: 50, status: 'available' } });
      expect(created.status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const text = await t.app.metrics.text();
      expect(valueOf(text, 'fromagerie_backlog_query_success')).toBe(1);
      expect(valueOf(text, 'fromagerie_outbox_undispatched_events')).toBeGreaterThanOrEqual(1);
      expect(valueOf(text, 'fromagerie_outbox_lag_seconds')).toBeGreaterThan(0);
      expect(valueOf(text, REQUEST_COUNT, { method: 'POST', route: '/v2/cheeses', status: '201' })).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('counts webhook attempts by outcome: delivered, and the failure class', async () => {
    const { t, auth } = await createAdminTestApp({ workers: true });
    const receiver = await new Receiver().start();
    const closed = await freePort();
    try {
      for (const url of [receiver.url('/ok'), `http://127.0.0.1:${closed}/nobody`]) {
        const res = await t.http.post('/v2/webhooks', { headers: auth, json: { url, events: ['cheese.*'] } });
        expect(res.status, res.text).toBe(201);
      }
      const created = await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Webhook Comté', pricePerKg: 20, stockQuantityKg: 50, status: 'available' } });
      expect(created.status).toBe(201);
      await receiver.waitFor('/ok', 1);
      const text = await until(
        () => t.app.metrics.text(),
        (s) => (valueOf(s, 'fromagerie_webhook_attempts_total', { outcome: 'delivered' }) ?? 0) >= 1 && (valueOf(s, 'fromagerie_webhook_attempts_total', { outcome: 'connection_refused' }) ?? 0) >= 1,
      );
      expect(valueOf(text, 'fromagerie_webhook_attempts_total', { outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(text, 'fromagerie_webhook_attempts_total', { outcome: 'connection_refused' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(text, 'fromagerie_webhook_attempt_duration_seconds_count')).toBeGreaterThanOrEqual(2);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('counts the deliveries pending, due and dead (the webhooks module\'s read), never the delivered ones', async () => {
    const began = performance.now();
    const { t, auth } = await createAdminTestApp();
    const receiver = await new Receiver().start();
    const closed = await freePort();
    try {
      const failing = await t.http.post('/v2/webhooks', { headers: auth, json: { url: `http://127.0.0.1:${closed}/nobody`, events: ['cheese.*'] } });
      const answering = await t.http.post('/v2/webhooks', { headers: auth, json: { url: receiver.url('/ok'), events: ['order.*'] } });
      expect([failing.status, answering.status]).toEqual([201, 201]);
      expect((await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Backlog Beaufort', pricePerKg: 20, stockQuantityKg: 50, status: 'available' } })).status).toBe(201);
      // A test is one attempt, made at once: to the closed port it is dead-lettered, to the receiver delivered.
      expect((await t.http.post(`/v2/webhooks/${failing.body.id}/test`, { headers: auth })).body.outcome).toBe('dead_lettered');
      expect((await t.http.post(`/v2/webhooks/${answering.body.id}/test`, { headers: auth })).body.outcome).toBe('delivered');
      // No dispatcher runs in this app: the fan-out is run here, and nothing else is attempted.
      const { dispatcher } = t.app.modules.webhooks.provides;
      const text = await until(
        async () => {
          await dispatcher.fanOut();
          return t.app.metrics.text();
        },
        (s) => valueOf(s, 'fromagerie_outbox_undispatched_events') === 0,
      );
      const cheeseEvents = (await t.http.get('/v2/events?type=cheese.*', { headers: auth })).body.items.length;
      expect(cheeseEvents).toBeGreaterThanOrEqual(1);
      expect(valueOf(text, 'fromagerie_outbox_undispatched_events')).toBe(0);
      expect(valueOf(text, 'fromagerie_outbox_lag_seconds')).toBe(0);
      expect(valueOf(text, 'fromagerie_webhook_deliveries', { state: 'pending' })).toBe(cheeseEvents);
      expect(valueOf(text, 'fromagerie_webhook_deliveries_due')).toBe(cheeseEvents);
      // The due deliveries' age: due since their fan-out, within this test.
      const oldestDue = valueOf(text, 'fromagerie_webhook_oldest_due_seconds')!;
      expect(oldestDue).toBeGreaterThanOrEqual(0);
      expect(oldestDue).toBeLessThanOrEqual((performance.now() - began) / 1000);
      // Nothing attempts them here: the age grows with time (the gauges are read anew every 2 s).
      await expect.poll(async () => valueOf(await t.app.metrics.text(), 'fromagerie_webhook_oldest_due_seconds'), { timeout: 6000, interval: 200 }).toBeGreaterThan(oldestDue + 1);
      expect(valueOf(text, 'fromagerie_webhook_deliveries', { state: 'dead' })).toBe(1);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('counts job runs and failures through the job runner', async () => {
    const { t } = await createAdminTestApp();
    try {
      let runs = 0;
      const jobs = startJobs(
        [
          {
            name: 'always-fails',
            everyMs: 10,
            run: async () => {
              runs++;
              throw new Error('broken on purpose');
            },
          },
        ],
        t.app.log,
        t.app.metrics.jobs,
      );
      await until(async () => String(runs), () => runs >= 3, 5000);
      await jobs.stop();
      const text = await t.app.metrics.text();
      expect(valueOf(text, 'fromagerie_job_runs_total', { job: 'always-fails', outcome: 'failed' })).toBe(runs);
      expect(valueOf(text, 'fromagerie_job_runs_total', { job: 'always-fails', outcome: 'ok' })).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('counts rate-limit decisions made on local buckets while Redis is unreachable', async () => {
    const nobody = await freePort();
    const { t } = await createAdminTestApp({
      config: { redisUrl: `redis://127.0.0.1:${nobody}`, rateLimits: { enabled: true, free: { perHour: 1000, burst: 100 }, pro: { perHour: 1000, burst: 100 }, enterprise: { perSecond: 100, burst: 100 }, perMinute: 1000 } },
    });
    try {
      for (let i = 0; i < 3; i++) expect((await t.http.get('/v2/cheeses')).status).toBe(401);
      const text = await t.app.metrics.text();
      expect(valueOf(text, 'fromagerie_rate_limit_fallbacks_total')).toBeGreaterThanOrEqual(3);
      expect(valueOf(text, 'fromagerie_rate_limit_fail_closed_total')).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('still answers when the database is gone: the backlog reads NaN and says so, the rest is there', async () => {
    const { t } = await createAdminTestApp();
    try {
      expect(valueOf(await t.app.metrics.text(), 'fromagerie_backlog_query_success')).toBe(1);
      await t.database.close();
      // The last answer is kept 2 s; then the failed query shows.
      const text = await until(() => t.app.metrics.text(), (s) => valueOf(s, 'fromagerie_backlog_query_success') === 0, 6000);
      expect(valueOf(text, 'fromagerie_backlog_query_success')).toBe(0);
      expect(valueOf(text, 'fromagerie_outbox_lag_seconds')).toBeNaN();
      expect(valueOf(text, 'fromagerie_webhook_deliveries', { state: 'pending' })).toBeNaN();
      expect(valueOf(text, 'fromagerie_webhook_oldest_due_seconds')).toBeNaN();
      expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });

  it('answers within about a second when the database hangs (a server that accepts and never answers)', async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const storage = await createTestStorage();
    const database = openDatabase({ dataDir: storage.dataDir, databaseUrl: `postgres://nobody@127.0.0.1:${port}/none` });
    const sources = backlogOf(database);
    const metrics = createMetricsModule({ database, backlog: sources });
    metrics.wire({ deliveries: sources.deliveries });
    try {
      const started = performance.now();
      const text = await metrics.provides.text();
      const seconds = (performance.now() - started) / 1000;
      console.error(`metrics.test.ts: a scrape with a hanging database answered in ${seconds.toFixed(2)} s`);
      expect(valueOf(text, 'fromagerie_backlog_query_success')).toBe(0);
      expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      // The next scrape waits for the same query (one in flight at most), whose connection is
      // still being opened: the pool shows it busy. So the first answered before the connection
      // could fail (5 s connect timeout): the backlog's own deadline answered, not the pool.
      const again = await metrics.provides.text();
      expect(valueOf(again, 'fromagerie_backlog_query_success')).toBe(0);
      expect(valueOf(again, 'fromagerie_db_pool_connections', { state: 'busy' })).toBe(1);
      expect(valueOf(again, 'fromagerie_db_pool_connections', { state: 'idle' })).toBe(0);
    } finally {
      metrics.provides.close();
      silent.close();
      await database.close().catch(() => {});
      await storage.dispose();
    }
  });
});
