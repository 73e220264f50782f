/**
 * npm run bench [-- --rows N] [--duration S] [--connections C] [--warmup S] [--cpu-prof DIR]
 *
 * Starts the real service (SQLite in a temporary DATA_DIR, seeded, CHEESE_ENV=production so
 * API keys are checked exactly as in production, LOG_LEVEL=warn) and a bare node:http server
 * replaying the service's own responses byte for byte, pins both to CPU 1 and the load
 * generator (autocannon, in this process) to CPU 0 when the machine has two cores and
 * taskset, and drives each with the same load. See docs/performance.md.
 *
 * Exit status: 0 whatever the figures (a benchmark, not a test); 1 when the service does not
 * start, a response is not 200, or the run overruns its time budget.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { CursorCodec } from '../src/modules/catalogue/cursor.js';
import type { Fixture } from './bare-server.js';
import { BenchError, cleanup, fail, freePort, get, LOADGEN_CPU, pinning, runCli, runState, SERVER_CPU, startChild, tasksetAvailable, waitForHealth, waitForLine } from './processes.js';
import { cpuPerRequest, fmt, load, measure, pct, table, type Measurement } from './measure.js';
import { insertSyntheticCheeses } from './synthetic.js';

const SEED_CATALOGUE = 245;
const LIST_LIMIT = 20;
const TARGETS = { getById: 0.5, list: 0.3, depth: 1.5 };

// ---------------------------------------------------------------- options

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    'cpu-prof': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log('npm run bench -- [--rows N] [--duration seconds=10] [--connections 10] [--warmup seconds=2] [--cpu-prof DIR]');
  process.exit(0);
}
function positiveInt(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) {
    console.error(`--${name} must be a positive integer`);
    process.exit(2);
  }
  return n;
}
const rows = args.rows === undefined ? undefined : positiveInt('rows', args.rows);
const duration = positiveInt('duration', args.duration);
const connections = positiveInt('connections', args.connections);
const warmup = Number(args.warmup);
if (!Number.isFinite(warmup) || warmup < 0) {
  console.error('--warmup must be a number of seconds >= 0');
  process.exit(2);
}
const cpuProfDir = args['cpu-prof'] ? path.resolve(args['cpu-prof']) : undefined;

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const scenarios = 2 * 2 + (rows !== undefined ? 3 : 0);
  const budgetMs = 20 * 60_000 + scenarios * (warmup + duration + 30) * 1000;
  setTimeout(() => void fail(`time budget of ${Math.round(budgetMs / 60_000)} min exceeded`), budgetMs).unref();

  console.log(`Fromagerie benchmark — node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.availableParallelism()} CPUs`);
  console.log(
    pinning
      ? `Pinning: service and bare server on CPU ${SERVER_CPU} (taskset -c ${SERVER_CPU}), autocannon on CPU ${LOADGEN_CPU} (this process).`
      : `Pinning: off (${tasksetAvailable ? 'fewer than 2 CPUs' : 'no taskset'}); load generator and servers share the CPUs.`,
  );
  if (pinning) spawnSync('taskset', ['-a', '-cp', LOADGEN_CPU, String(process.pid)], { stdio: 'ignore' });
  console.log(`Load: ${connections} connections, ${warmup}s warm-up then ${duration}s per run; load average before: ${load()}`);

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-bench-'));
  runState.dataDir = dataDir;
  runState.stopGraceMs = cpuProfDir ? 20_000 : 5_000;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const appSecret = randomBytes(32).toString('base64url');
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Whatever the caller's shell has configured, the bench measures SQLite with production settings.
  for (const key of Object.keys(env)) {
    if (/^(CHEESE_ENV|HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_SCHEMA|ADMIN_USERNAME|ADMIN_PASSWORD|LOG_LEVEL|PUBLIC_URL|LOW_STOCK_THRESHOLD_KG|BODY_LIMIT_BYTES|APP_SECRET|TRUST_PROXY|NODE_OPTIONS)$/.test(key)) delete env[key];
  }
  Object.assign(env, {
    CHEESE_ENV: 'production',
    ADMIN_PASSWORD: `bench-${randomBytes(12).toString('base64url')}`,
    APP_SECRET: appSecret,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
  });

  // 1. Migrate and seed, then an API key through the operator CLI, as an operator would.
  let started = performance.now();
  runCli(['db:seed'], env);
  const key = runCli(['api-keys', 'create', '--user', 'admin', '--scopes', 'read:cheeses', '--name', 'bench'], env).trim().split('\n').at(-1)!;
  if (!/^sk_live_/.test(key)) throw new BenchError(`unexpected API key line from the CLI: ${key}`);
  console.log(`Seeded catalogue and created an sk_live_ key (read:cheeses) in ${((performance.now() - started) / 1000).toFixed(1)}s.`);

  // 2. Synthetic rows, straight into the file, before the service opens it.
  const dbFile = path.join(dataDir, 'fromagerie.sqlite');
  if (rows !== undefined && rows > SEED_CATALOGUE) {
    const db = new SQLite(dbFile);
    const existing = (db.prepare('select count(*) as n from cheeses').get() as { n: number }).n;
    console.log(`Inserting ${(rows - existing).toLocaleString('en-US')} synthetic cheeses …`);
    const inserted = insertSyntheticCheeses(db, rows - existing);
    db.close();
    const size = fs.statSync(dbFile).size / 1024 / 1024;
    console.log(`Inserted ${inserted.inserted.toLocaleString('en-US')} rows in ${inserted.seconds.toFixed(1)}s (${Math.round(inserted.inserted / inserted.seconds).toLocaleString('en-US')} rows/s); database file ${size.toFixed(0)} MB.`);
  }

  // 3. The service, as `npm start` runs it, pinned.
  const serviceArgs = ['--import', 'tsx', ...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []), 'src/server.ts'];
  started = performance.now();
  const service = startChild('service', serviceArgs, env);
  await waitForHealth(base, service, 120_000);
  console.log(`Service ready in ${((performance.now() - started) / 1000).toFixed(1)}s (pid ${service.process.pid}, CHEESE_ENV=production, LOG_LEVEL=warn).`);

  const auth = { 'x-api-key': key };
  const firstPage = await get(`${base}/v2/cheeses?limit=${LIST_LIMIT}`, auth);
  if (firstPage.status !== 200) throw new BenchError(`GET /v2/cheeses answered ${firstPage.status}: ${firstPage.body.toString().slice(0, 300)}`);
  const page = JSON.parse(firstPage.body.toString('utf8')) as { items: { id: number }[]; total: number; nextCursor: string | null };
  const reader = new SQLite(dbFile, { readonly: true, fileMustExist: true });
  const someId = (reader.prepare('select min(id) as id from cheeses').get() as { id: number }).id;
  const urls = { getById: `/v2/cheeses/${someId}`, list: `/v2/cheeses?limit=${LIST_LIMIT}` };
  console.log(`Catalogue: ${page.total.toLocaleString('en-US')} cheeses.`);

  // 4. The deep page: a cursor for the row at depth total - 2 × limit. Walking there would
  //    take total/100 requests that each count the whole table, so the cursor is signed here
  //    with the service's own codec and secret, after checking that this reproduces the
  //    cursor the service itself returned for page 1.
  let deepUrl: string | undefined;
  if (rows !== undefined) {
    const codec = new CursorCodec(appSecret);
    const binding = JSON.stringify(['name', 'asc', {}]);
    const positionAt = (offset: number) => reader.prepare('select sort_name as value, id from cheeses order by sort_name, id limit 1 offset ?').get(offset) as { value: string; id: number };
    if (codec.encode(positionAt(LIST_LIMIT - 1), page.total, binding) !== page.nextCursor) {
      throw new BenchError('could not reproduce the service’s own page-1 cursor; has the cursor binding in cheese-read.service.ts changed?');
    }
    const depth = Math.max(LIST_LIMIT, page.total - 2 * LIST_LIMIT);
    const cursor = codec.encode(positionAt(depth - 1), page.total, binding);
    deepUrl = `/v2/cheeses?limit=${LIST_LIMIT}&cursor=${encodeURIComponent(cursor)}`;
    const expectedFirst = positionAt(depth).id;
    const deep = await get(`${base}${deepUrl}`, auth);
    const deepPage = deep.status === 200 ? (JSON.parse(deep.body.toString('utf8')) as typeof page) : undefined;
    if (!deepPage || deepPage.items[0]?.id !== expectedFirst || deepPage.items.length !== LIST_LIMIT) {
      throw new BenchError(`deep page check failed (status ${deep.status}, first id ${deepPage?.items[0]?.id}, expected ${expectedFirst})`);
    }
    console.log(`Deep page: rows ${depth.toLocaleString('en-US')}–${(depth + LIST_LIMIT - 1).toLocaleString('en-US')} of ${page.total.toLocaleString('en-US')} (cursor checked against the service).`);
  }
  reader.close();

  // 5. The bare server, replaying what the service answered.
  const fixtures: Fixture[] = [];
  for (const url of Object.values(urls)) {
    const captured = await get(`${base}${url}`, auth);
    if (captured.status !== 200) throw new BenchError(`GET ${url} answered ${captured.status}: ${captured.body.toString().slice(0, 300)}`);
    fixtures.push({ url, status: captured.status, headers: captured.headers, body: captured.body.toString('base64') });
  }
  const fixtureFile = path.join(dataDir, 'fixtures.json');
  fs.writeFileSync(fixtureFile, JSON.stringify(fixtures));
  const bare = startChild('bare server', ['--import', 'tsx', 'bench/bare-server.ts', fixtureFile], { PATH: process.env.PATH ?? '' });
  const barePort = Number((await waitForLine(bare, /listening (\d+)/, 30_000))[1]);
  const bareBase = `http://127.0.0.1:${barePort}`;
  for (const fixture of fixtures) {
    const replay = await get(`${bareBase}${fixture.url}`, auth);
    const same = replay.status === fixture.status && replay.body.equals(Buffer.from(fixture.body, 'base64')) && JSON.stringify(replay.headers) === JSON.stringify(fixture.headers);
    if (!same) throw new BenchError(`bare server does not replay ${fixture.url} exactly`);
  }
  const sizes = fixtures.map((f) => `${f.url} ${Buffer.from(f.body, 'base64').length} B`).join(', ');
  console.log(`Bare server ready (pid ${bare.process.pid}); replays identical status, headers and bodies: ${sizes}.\n`);

  // 6. Load.
  const servicePid = service.process.pid!;
  const barePid = bare.process.pid!;
  const results: Measurement[] = [];
  const run = async (scenario: string, target: 'service' | 'bare', url: string, clients = connections) => {
    process.stdout.write(`  ${scenario} → ${target} … `);
    const m = await measure(scenario, target, `${target === 'service' ? base : bareBase}${url}`, auth, target === 'service' ? servicePid : barePid, clients, { warmup, duration });
    results.push(m);
    console.log(`${fmt(m.rps)} req/s, p99 ${fmt(m.p99Ms, 2)} ms${m.bad.length ? `  !! ${m.bad.join(', ')}` : ''}`);
    return m;
  };
  const byIdService = await run('GET /v2/cheeses/{id}', 'service', urls.getById);
  const byIdBare = await run('GET /v2/cheeses/{id}', 'bare', urls.getById);
  const listService = await run(`GET /v2/cheeses?limit=${LIST_LIMIT}`, 'service', urls.list);
  const listBare = await run(`GET /v2/cheeses?limit=${LIST_LIMIT}`, 'bare', urls.list);
  const deepLabel = `GET /v2/cheeses?limit=${LIST_LIMIT}&cursor=<depth ${fmt(page.total - 2 * LIST_LIMIT)}>`;
  const deepService = deepUrl ? await run(deepLabel, 'service', deepUrl) : undefined;
  // The same pair with one connection: each request's own latency, without queueing.
  const firstAlone = deepUrl && connections > 1 ? await run(`GET /v2/cheeses?limit=${LIST_LIMIT}, 1 connection`, 'service', urls.list, 1) : undefined;
  const deepAlone = deepUrl && connections > 1 ? await run(`${deepLabel}, 1 connection`, 'service', deepUrl, 1) : undefined;
  console.log(`\nLoad average after: ${load()}\n`);

  console.log(
    table(
      ['Scenario', 'Server', 'req/s', 'mean ms', 'p50 ms', 'p99 ms', 'server CPU', 'µs CPU/req', 'autocannon CPU', 'other CPU'],
      results.map((m) => [m.scenario, m.target, fmt(m.rps), fmt(m.meanMs, 2), fmt(m.p50Ms, 2), fmt(m.p99Ms, 2), pct(m.serverCpu), fmt(cpuPerRequest(m)), pct(m.loadgenCpu), pct(m.otherCpu)]),
      [false, false, true, true, true, true, true, true, true, true],
    ),
  );
  console.log('(CPU: % of one core over the measured run; µs CPU/req: server CPU time per response; "other": everything else on the machine.)\n');

  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  // CPU per response is much less sensitive than req/s to whatever else the machine runs.
  const cpuRatio = (service: Measurement, bare: Measurement) => {
    const s = cpuPerRequest(service);
    const b = cpuPerRequest(bare);
    return s === undefined || b === undefined ? '-' : `${fmt((b / s) * 100, 1)}%`;
  };
  const checks: string[][] = [
    ['GET /v2/cheeses/{id} with an API key', 'service / bare req/s', `${fmt((byIdService.rps / byIdBare.rps) * 100, 1)}%`, `>= ${TARGETS.getById * 100}%`, verdict(byIdService.rps / byIdBare.rps >= TARGETS.getById)],
    ['', 'bare / service CPU per request', cpuRatio(byIdService, byIdBare), '(info)', ''],
    [`GET /v2/cheeses?limit=${LIST_LIMIT}`, 'service / bare req/s', `${fmt((listService.rps / listBare.rps) * 100, 1)}%`, `>= ${TARGETS.list * 100}%`, verdict(listService.rps / listBare.rps >= TARGETS.list)],
    ['', 'bare / service CPU per request', cpuRatio(listService, listBare), '(info)', ''],
  ];
  if (deepService) {
    const ratio = deepService.p99Ms / listService.p99Ms;
    checks.push(['Page at depth vs first page', 'deep / first p99', `${fmt(ratio, 2)}×`, `<= ${TARGETS.depth}×`, verdict(ratio <= TARGETS.depth)]);
    checks.push(['', 'deep / first mean', `${fmt(deepService.meanMs / listService.meanMs, 2)}×`, '(info)', '']);
    if (firstAlone && deepAlone) checks.push(['', 'deep / first median, 1 connection', `${fmt(deepAlone.p50Ms / firstAlone.p50Ms, 2)}×`, '(info)', '']);
  }
  console.log(table(['Check', 'Measure', 'Measured', 'Target', 'Result'], checks, [false, false, true, false, false]));

  const bad = results.filter((m) => m.bad.length > 0);
  await cleanup();
  if (cpuProfDir) console.log(`\nService CPU profile written to ${cpuProfDir}`);
  if (bad.length) {
    console.error(`\nbench: non-200 responses or errors in: ${bad.map((m) => `${m.scenario} (${m.target}): ${m.bad.join(', ')}`).join('; ')}`);
    process.exit(1);
  }
}

main().catch((error: unknown) => fail(error instanceof BenchError ? error.message : String((error as Error)?.stack ?? error)));
