/**
 * The dashboard's pages with a long attempt log and a full request log (part of `npm run bench`;
 * alone: `npm run bench:dashboard [-- --database-url postgres://…]`, or PostgreSQL through
 * TEST_DATABASE_URL as the other benches take it).
 *
 * Starts the real service (production settings, SQLite in a temporary DATA_DIR or the
 * PostgreSQL given, in a fresh schema), signs a customer up, writes one webhook of theirs with
 * 2,500 events, 2,500 deliveries and 10,000 attempts straight into the database (delivered,
 * failed, pending and dead-lettered, all within the last 24 hours), 100,000 request-log entries
 * of theirs (within the last `--log-hours`, 24 by default: every one in the overview's window),
 * places orders through /v2, signs the customer and staff in through the form, then GETs each
 * page of PAGES 200 times one after another and reports the server's time per page (its
 * `Server-Timing` header, p50 and p95) beside the time seen by the client. The bar: p95
 * under 50 ms on every page. A page is one line of PAGES.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { webhookSecretBox } from '../src/modules/webhooks/webhook.secrets.js';
import { KeyRing } from '../src/kernel/key-ring.js';
import { fmt, percentile, table } from './measure.js';
import { benchSchema, cleanup, fail, freePort, runState, seedAndStaffKey, serviceEnv, startChild, waitForHealth } from './processes.js';
import { seedRequestLog } from './dashboard-seed.js';

const { values: args } = parseArgs({ options: { 'database-url': { type: 'string' }, requests: { type: 'string', default: '200' }, 'log-entries': { type: 'string', default: '100000' }, 'log-hours': { type: 'string', default: '24' } } });
const EVENTS = 2_500;
const ATTEMPTS_PER_EVENT = 4;
const REQUESTS = Number(args.requests);
const ORDERS = 25;

/** What the pages' addresses are made of, found once the data is in. */
interface Found {
  webhookId: number;
  /** The deliveries page's link to its second page. */
  next: string;
  /** An attempt's page. */
  attempt: string;
  /** The newest order (its events have deliveries). */
  orderId: number;
  /** A day (UTC) in the middle of the attempts. */
  day: string;
}

/** Every page measured, and who reads it: add a line to measure a new page. */
const PAGES: { name: string; as: 'customer' | 'staff'; path: (found: Found) => string }[] = [
  { name: 'overview (charts over 100,000 log entries)', as: 'customer', path: () => '/dashboard' },
  { name: 'overview, staff (every account)', as: 'staff', path: () => '/dashboard' },
  { name: 'API keys', as: 'customer', path: () => '/dashboard/keys' },
  { name: 'webhooks', as: 'customer', path: () => '/dashboard/webhooks' },
  { name: 'a webhook', as: 'customer', path: (f) => `/dashboard/webhooks/${f.webhookId}` },
  { name: 'deliveries', as: 'customer', path: (f) => `/dashboard/webhooks/${f.webhookId}/deliveries` },
  { name: 'deliveries, page 2', as: 'customer', path: (f) => f.next },
  { name: 'deliveries: dead-lettered', as: 'customer', path: (f) => `/dashboard/webhooks/${f.webhookId}/deliveries?outcome=dead_lettered` },
  { name: 'deliveries: pending', as: 'customer', path: (f) => `/dashboard/webhooks/${f.webhookId}/deliveries?outcome=pending` },
  { name: 'deliveries: one type, one day', as: 'customer', path: (f) => `/dashboard/webhooks/${f.webhookId}/deliveries?eventType=order.shipped&from=${f.day}&to=${f.day}` },
  { name: 'an attempt', as: 'customer', path: (f) => f.attempt },
  { name: 'dead letters (all)', as: 'customer', path: () => '/dashboard/webhooks/dead-letters' },
  { name: 'replay all (confirmation, counts)', as: 'customer', path: (f) => `/dashboard/webhooks/dead-letters/replay-all?webhook=${f.webhookId}` },
  { name: 'events', as: 'customer', path: () => '/dashboard/events' },
  { name: 'events: order.* on one day', as: 'customer', path: (f) => `/dashboard/events?type=order.*&from=${f.day}&to=${f.day}` },
  { name: 'event kinds', as: 'customer', path: () => '/dashboard/events/kinds' },
  { name: 'logs (100,000 entries)', as: 'customer', path: () => '/dashboard/logs' },
  { name: 'logs, staff (every account)', as: 'staff', path: () => '/dashboard/logs' },
  { name: 'logs: 4xx POST /v2/orders', as: 'customer', path: () => '/dashboard/logs?status=4xx&method=POST&path=%2Fv2%2Forders' },
  { name: 'orders', as: 'customer', path: () => '/dashboard/orders' },
  { name: 'orders, staff', as: 'staff', path: () => '/dashboard/orders' },
  { name: 'an order (timeline, deliveries of its events)', as: 'customer', path: (f) => `/dashboard/orders/${f.orderId}` },
];

class Browser {
  readonly cookies = new Map<string, string>();
  csrf = '';
  constructor(readonly base: string) {}
  async request(method: string, pathname: string, form?: Record<string, string>) {
    const started = performance.now();
    const response = await fetch(`${this.base}${pathname}`, {
      method,
      redirect: 'manual',
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form && { 'content-type': 'application/x-www-form-urlencoded' }) },
      body: form && new URLSearchParams({ _csrf: this.csrf, ...form }),
    });
    const html = await response.text();
    const clientMs = performance.now() - started;
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    this.csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? this.csrf;
    const serverMs = Number(/dur=([0-9.]+)/.exec(response.headers.get('server-timing') ?? '')?.[1]);
    return { status: response.status, html, clientMs, serverMs };
  }
}

async function seed(env: NodeJS.ProcessEnv, accountId: number): Promise<number> {
  const database = openDatabase({ dataDir: env.DATA_DIR!, databaseUrl: env.DATABASE_URL, databaseSchema: env.DATABASE_SCHEMA, poolSize: 2 });
  const { db } = database;
  const now = Date.now();
  const at = (ms: number) => new Date(ms).toISOString();
  try {
    const webhook = await db
      .insertInto('webhooks')
      .values({ account_id: accountId, url: 'https://receiver.example/hook', events: '["order.*"]', description: 'bench', max_attempts: 5, scopes: 'read:orders', active: true, disabled_reason: null, secret_ciphertext: webhookSecretBox(new KeyRing({ appSecret: env.APP_SECRET! }).keys('webhook-secrets')).seal('whsec_YmVuY2ggYmVuY2ggYmVuY2ggYmVuY2ggYmVuY2g='), created_at: at(now - 86_400_000), updated_at: at(now) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const kinds = ['order.placed', 'order.approved', 'order.shipped', 'order.delivered'];
    for (let start = 0; start < EVENTS; start += 250) {
      await db.transaction().execute(async (trx) => {
        for (let i = start; i < start + 250; i++) {
          const created = now - (EVENTS - i) * 20_000;
          const type = kinds[i % kinds.length]!;
          const event = await trx
            .insertInto('outbox')
            .values({ event_id: `evt_bench${String(i).padStart(8, '0')}`, type, aggregate_type: 'order', aggregate_id: String(i), data: JSON.stringify({ order_id: String(i) }), metadata: JSON.stringify({ request_id: `req_${i}` }), audience: `account:${accountId}`, environment: 'production', created_at: at(created) })
            .returning('id')
            .executeTakeFirstOrThrow();
          // 60% delivered at the 4th attempt, 30% dead-lettered, 10% still pending after 3 failures.
          const fate = i % 10 < 6 ? 'delivered' : i % 10 < 9 ? 'dead' : 'pending';
          const delivery = await trx
            .insertInto('webhook_deliveries')
            .values({ webhook_id: webhook.id, outbox_id: event.id, event_id: `evt_bench${String(i).padStart(8, '0')}`, event_type: type, state: fate, attempts: fate === 'pending' ? 3 : 4, max_attempts: 5, schedule_start: at(created), next_attempt_at: at(created + 3_600_000), lease_until: null, created_at: at(created), updated_at: at(created) })
            .returning('id')
            .executeTakeFirstOrThrow();
          for (let n = 1; n <= ATTEMPTS_PER_EVENT; n++) {
            const last = n === ATTEMPTS_PER_EVENT;
            const outcome = !last || fate === 'pending' ? 'failed' : fate === 'delivered' ? 'delivered' : 'dead_lettered';
            await trx
              .insertInto('webhook_attempts')
              .values({ delivery_id: delivery.id, webhook_id: webhook.id, event_id: `evt_bench${String(i).padStart(8, '0')}`, event_type: type, attempt: n, outcome, status_code: outcome === 'delivered' ? 200 : 500, latency_ms: 40 + n, error: outcome === 'delivered' ? null : 'HTTP 500', next_attempt_at: outcome === 'failed' ? at(created + n * 60_000) : null, created_at: at(created + n * 1000), request_headers: JSON.stringify({ 'content-type': 'application/json', 'webhook-id': `evt_bench${i}` }), response_body: outcome === 'delivered' ? 'ok' : 'Internal Server Error', error_class: outcome === 'delivered' ? null : 'http_error' })
              .execute();
          }
        }
      });
    }
    // What autovacuum does within a minute of such a load (it analyses a table once 10% of it
    // changed): without statistics the planner scans the whole log for the rare filters.
    if (env.DATABASE_URL) await sql`analyze`.execute(db);
    return webhook.id;
  } finally {
    await database.close();
  }
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-dashboard-'));
  runState.dataDir = dataDir;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = args['database-url'] ?? process.env.TEST_DATABASE_URL;
  const { schema, drop } = await benchSchema(databaseUrl);
  const env = serviceEnv({ port, dataDir, environment: 'production', databaseUrl, schema });
  try {
    const service = startChild('service', ['--import', 'tsx', 'src/server.ts'], env);
    await waitForHealth(base, service, 120_000);
    const username = 'bench.developer';
    const password = 'correct horse battery staple 42';
    const signUp = await fetch(`${base}/v2/customer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, email: 'developer@example.com', password }) });
    const accountId = Number(((await signUp.json()) as { id: number }).id);
    if (signUp.status !== 201) await fail(`sign-up: ${signUp.status}`);
    const webhookId = await seed(env, accountId);
    await seedRequestLog(env, accountId, Number(args['log-entries']), Number(args['log-hours']));
    const orderId = await placeOrders(env, base, username, password);

    const browser = new Browser(base);
    await browser.request('GET', '/dashboard/login');
    if ((await browser.request('POST', '/dashboard/login', { username, password })).status !== 303) await fail('dashboard sign-in failed');
    const staff = new Browser(base);
    await staff.request('GET', '/dashboard/login');
    if ((await staff.request('POST', '/dashboard/login', { username: 'admin', password: env.ADMIN_PASSWORD! })).status !== 303) await fail('staff sign-in failed');
    const log = await browser.request('GET', `/dashboard/webhooks/${webhookId}/deliveries`);
    const next = /href="(\/dashboard\/webhooks\/\d+\/deliveries\?[^"]*next=[^"]+)"/.exec(log.html)?.[1]?.replace(/&amp;/g, '&');
    const attempt = /href="(\/dashboard\/webhooks\/\d+\/deliveries\/\d+)"/.exec(log.html)?.[1];
    if (!next || !attempt) await fail('the deliveries page has no next page or attempt link');
    const found: Found = { webhookId, next: next!, attempt: attempt!, orderId, day: new Date(Date.now() - 86_400_000 / 4).toISOString().slice(0, 10) };
    const rows: string[][] = [];
    let worst = 0;
    for (const { name, as, path: pathOf } of PAGES) {
      const pathname = pathOf(found);
      const reader = as === 'staff' ? staff : browser;
      const server: number[] = [];
      const client: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const page = await reader.request('GET', pathname);
        if (page.status !== 200) await fail(`${name} (${pathname}): ${page.status}`);
        server.push(page.serverMs);
        client.push(page.clientMs);
      }
      // The first view pays what later ones find kept (the overview's closed hours).
      const first = server[0]!;
      server.sort((a, b) => a - b);
      client.sort((a, b) => a - b);
      worst = Math.max(worst, percentile(server, 95));
      rows.push([name, fmt(first, 1), fmt(percentile(server, 50), 1), fmt(percentile(server, 95), 1), fmt(percentile(client, 95), 1)]);
    }
    console.log(`\nDashboard pages, ${databaseUrl ? 'PostgreSQL' : 'SQLite'}, ${EVENTS * ATTEMPTS_PER_EVENT} attempts in the log, ${args['log-entries']} request-log entries over ${args['log-hours']} h, ${REQUESTS} sequential GETs per page (ms)\n`);
    console.log(table(['page', 'server, first GET', 'server p50', 'server p95', 'client p95'], rows, [false, true, true, true, true]));
    console.log(`\nslowest page p95 (server): ${fmt(worst, 1)} ms ${worst < 50 ? '(under the 50 ms bar)' : '(OVER the 50 ms bar)'}`);
  } finally {
    await cleanup();
    await drop();
  }
}

/** A cheese (staff, through /v2) and ORDERS orders of it by the customer: the orders pages' rows; answers the newest's id. */
async function placeOrders(env: NodeJS.ProcessEnv, base: string, username: string, password: string): Promise<number> {
  const staffKey = seedAndStaffKey(env);
  const post = async (pathname: string, body: unknown, headers: Record<string, string>) => {
    const response = await fetch(`${base}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const json = (await response.json()) as Record<string, unknown>;
    if (response.status >= 300) await fail(`${pathname}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const cheese = await post('/v2/cheeses', { name: 'Bench Dashboard Tomme', pricePerKg: 24, stockQuantityKg: 1000 }, { authorization: `Bearer ${staffKey}` });
  const token = String((await post('/v2/customer/login', { username, password }, {})).token);
  let id = 0;
  for (let i = 0; i < ORDERS; i++) {
    const order = await post('/v2/orders', { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Bench Street', city: 'Lyon', country: 'FR' } } }, { authorization: `Bearer ${token}` });
    id = Number(order.id);
  }
  return id;
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  await cleanup();
  process.exit(1);
});
