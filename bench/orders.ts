/**
 * Order placement (part of `npm run bench`; alone: `npm run bench:orders [-- --database-url postgres://… --pool-size 20]`).
 *
 * Starts the real service (SQLite in a temporary DATA_DIR, or the PostgreSQL given, in a fresh
 * schema), creates 40 cheeses with ample stock and 20 customers with login tokens, and drives
 * POST /v2/orders with wrk (50 connections, a Lua script choosing a random cheese, quantity and
 * customer per request). The lifecycle worker is off (`-1` delays) so placement alone is
 * measured, and rate limits are off (`RATE_LIMITS=off`): the customers would be on the Free
 * plan. Afterwards the stock of every cheese must be exactly its start minus what the placed
 * orders hold, and there must be no error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuFigures, cpuSample, fmt } from './measure.js';
import { benchSchema, cleanup, fail, freePort, pinning, runState, seedAndStaffKey, serviceEnv, startChild, waitForHealth } from './processes.js';
import { runWrk, wrkAvailable } from './wrk.js';
import { ordersLuaRequest } from './order-load.js';
import { cpuBetween, cpuSeconds } from './cluster-services.js';
import pg from 'pg';

/** The pids of the backends connected to the bench's database (readable in /proc only when PostgreSQL runs here). */
async function backendPids(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return rows.map((row) => row.pid).filter((pid) => fs.existsSync(`/proc/${pid}/stat`));
  } finally {
    await client.end();
  }
}

const { values: args } = parseArgs({ options: { 'database-url': { type: 'string' }, duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' }, 'pool-size': { type: 'string' } } });
const CHEESES = 40;
const CUSTOMERS = 20;
const START_GRAMS = 10_000_000; // 10 tonnes each: no order is ever short

async function json(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
}

async function main(): Promise<void> {
  if (!wrkAvailable) await fail('the order benchmark needs wrk (apt-get install -y wrk)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-orders-'));
  runState.dataDir = dataDir;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = args['database-url'];
  const { schema, drop: dropSchema } = await benchSchema(databaseUrl);
  // Production settings; the lifecycle worker off, so placement alone is measured.
  const env = serviceEnv({ port, dataDir, environment: 'production', databaseUrl, schema, extra: { PAYMENT_CAPTURE_DELAY_S: '-1', SHIP_DELAY_S: '-1', DELIVER_DELAY_S: '-1', ...(args['pool-size'] ? { DATABASE_POOL_SIZE: args['pool-size'] } : {}) } });

  try {
    const key = seedAndStaffKey(env);
    const service = startChild('service', ['--import', 'tsx', 'src/server.ts'], env);
    await waitForHealth(base, service, 120_000);
    const staff = { authorization: `Bearer ${key}` };

    const cheeseIds: number[] = [];
    for (let i = 0; i < CHEESES; i++) {
      const created = await json(`${base}/v2/cheeses`, 'POST', { name: `Bench cheese ${i}`, pricePerKg: 10 + i, stockQuantityKg: START_GRAMS / 1000 }, staff);
      if (created.status !== 201) await fail(`creating a cheese: ${created.status}`);
      cheeseIds.push(Number(created.body.id));
    }
    const tokens: string[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const username = `bench.buyer.${i}`;
      const password = 'correct horse battery staple 42';
      if ((await json(`${base}/v2/customer`, 'POST', { username, email: `buyer${i}@example.com`, password })).status !== 201) await fail('sign-up failed');
      tokens.push(String((await json(`${base}/v2/customer/login`, 'POST', { username, password })).body.token));
    }

    const script = path.join(dataDir, 'orders.lua');
    fs.writeFileSync(
      script,
      ordersLuaRequest(cheeseIds, tokens),
    );
    const connections = Number(args.connections);
    await runWrk(`${base}/v2/orders`, {}, 2, connections, script); // warm-up
    // PostgreSQL's share, when it runs on this machine: its backends serving the bench's database.
    const backends = databaseUrl ? await backendPids(databaseUrl) : [];
    const pgBefore = cpuSeconds(backends);
    const before = cpuSample(service.process.pid!);
    const result = await runWrk(`${base}/v2/orders`, {}, Number(args.duration), connections, script);
    const after = cpuSample(service.process.pid!);
    const pgSeconds = cpuBetween(pgBefore, cpuSeconds(backends));
    const cpu = cpuFigures(before, after, result.seconds, 'child', pinning ? { server: '1', loadgen: '0' } : undefined);

    // wrk stops sending, but requests already queued in the service still commit: wait until
    // the newest order stays the same for half a second before comparing stock and orders.
    const newest = async () => JSON.stringify((await json(`${base}/v2/orders?limit=1`, 'GET', undefined, staff)).body.items);
    for (let last = '', now = await newest(); now !== last; ) {
      last = now;
      await new Promise((r) => setTimeout(r, 500));
      now = await newest();
    }

    // Stock: every cheese's start, minus what the placed orders hold, exactly.
    let held = 0;
    let stock = 0;
    let orders = 0;
    for (const id of cheeseIds) stock += Number((await json(`${base}/v2/cheeses/${id}`, 'GET', undefined, { 'x-api-key': key })).body.stockQuantityKg) * 1000;
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page = await json(`${base}/v2/orders?limit=100${cursor ? `&cursor=${cursor}` : ''}`, 'GET', undefined, staff);
      for (const order of page.body.items as { items: { cheeseId: number; quantityKg: number }[] }[]) {
        if (!cheeseIds.includes(order.items[0]!.cheeseId)) continue;
        orders++;
        held += Math.round(order.items[0]!.quantityKg * 1000);
      }
      cursor = page.body.nextCursor as string | null;
    }
    const stockRight = Math.round(stock) === CHEESES * START_GRAMS - held;
    const cpuPerOrder = cpu.serverCpu === undefined || !(result.rps > 0) ? undefined : (cpu.serverCpu / 100 / result.rps) * 1e6;
    console.log(`\nOrder placement, ${databaseUrl ? `PostgreSQL (pool ${args['pool-size'] ?? 'default'})` : 'SQLite'}: wrk, ${connections} connections, ${args.duration} s${pinning ? ' (service on CPU 1, wrk on CPU 0)' : ''}; load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
    const pgPerOrder = backends.length > 0 && result.requests > 0 ? fmt((pgSeconds / result.requests) * 1e6) : '-';
    console.log(`| orders/s | p50 ms | p99 ms | service CPU | µs CPU/order | µs PostgreSQL CPU/order | errors | orders counted | stock exact |`);
    console.log(`|---:|---:|---:|---:|---:|---:|---:|---:|---|`);
    console.log(`| ${fmt(result.rps)} | ${fmt(result.p50Ms, 1)} | ${fmt(result.p99Ms, 1)} | ${fmt(cpu.serverCpu)}% | ${fmt(cpuPerOrder)} | ${pgPerOrder} | ${result.non2xx + result.socketErrors} | ${orders} | ${stockRight ? 'yes' : `NO (${stock} g in stock, ${CHEESES * START_GRAMS - held} g expected)`} |`);
    if (result.non2xx + result.socketErrors > 0 || !stockRight) process.exitCode = 1;
  } finally {
    await dropSchema();
  }
}

main()
  .catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
  .finally(cleanup);
