/**
 * npm run bench [-- --rows N] [--duration S] [--connections C] [--warmup S] [--loadgen wrk|autocannon] [--cpu-prof DIR]
 *
 * Starts the real service (SQLite in a temporary DATA_DIR, seeded, CHEESE_ENV=production so
 * API keys are checked exactly as in production, LOG_LEVEL=warn) and a bare node:http server
 * replaying the service's own responses byte for byte, pins both to CPU 1 and the load
 * generator (wrk when installed, else autocannon in this process) to CPU 0 when the machine
 * has two cores and taskset, and drives each with the same load. A ratio is only reported as
 * valid when the bare server was saturated (>= 95% of its core); each run says what bounded it
 * (the server, the load generator, or other processes on a pinned CPU). See docs/performance.md.
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
import { CursorCodec } from '../src/kernel/pagination.js';
import { KeyRing } from '../src/kernel/key-ring.js';
import { encodeCheeseCursor } from '../src/modules/catalogue/cheese-read.service.js';
import type { Fixture } from './bare-server.js';
import { BenchError, cleanup, fail, freePort, get, LOADGEN_CPU, pinning, runCli, runState, SERVER_CPU, startChild, tasksetAvailable, waitForHealth, waitForLine } from './processes.js';
import { boundBy, cpuPerRequest, fmt, load, measure, pct, SATURATED_CPU, table, type Measurement } from './measure.js';
import { insertSyntheticCheeses } from './synthetic.js';
import { measureWithWrk, wrkAvailable } from './wrk.js';

const SEED_CATALOGUE = 245;
const LIST_LIMIT = 20;
const TARGETS = { getById: 0.5, list: 0.3, depth: 1.5 };

// ---------------------------------------------------------------- options

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string' },
    loadgen: { type: 'string' },
    warmup: { type: 'string', default: '2' },
    'cpu-prof': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log('npm run bench -- [--rows N] [--duration seconds=10] [--connections 50 with wrk, 10 with autocannon] [--warmup seconds=2] [--loadgen wrk|autocannon] [--cpu-prof DIR]');
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
if (args.loadgen !== undefined && args.loadgen !== 'wrk' && args.loadgen !== 'autocannon') {
  console.error('--loadgen must be wrk or autocannon');
  process.exit(2);
}
if (args.loadgen === 'wrk' && !wrkAvailable) {
  console.error('--loadgen wrk: wrk is not installed (apt-get install -y wrk)');
  process.exit(2);
}
const loadgen: 'wrk' | 'autocannon' = (args.loadgen as 'wrk' | 'autocannon' | undefined) ?? (wrkAvailable ? 'wrk' : 'autocannon');
const connections = positiveInt('connections', args.connections ?? (loadgen === 'wrk' ? '50' : '10'));
const cores = pinning ? { server: SERVER_CPU, loadgen: LOADGEN_CPU } : undefined;
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
      ? `Pinning: service and bare server on CPU ${SERVER_CPU} (taskset -c ${SERVER_CPU}), ${loadgen} on CPU ${LOADGEN_CPU}.`
      : `Pinning: off (${tasksetAvailable ? 'fewer than 2 CPUs' : 'no taskset'}); load generator and servers share the CPUs.`,
  );
  if (pinning) spawnSync('taskset', ['-a', '-cp', LOADGEN_CPU, String(process.pid)], { stdio: 'ignore' });
  const how = loadgen === 'wrk' ? `wrk -t1 -c${connections} --latency` : `autocannon (in this process)${wrkAvailable ? ', forced by --loadgen' : ', as wrk is not installed (apt-get install -y wrk)'}`;
  console.log(`Load generator: ${how}; ${connections} keep-alive connections, ${warmup}s warm-up then ${duration}s per run; load average before: ${load()}`);

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-bench-'));
  runState.dataDir = dataDir;
  runState.stopGraceMs = cpuProfDir ? 20_000 : 5_000;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const appSecret = randomBytes(32).toString('base64url');
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Whatever the caller's shell has configured, the bench measures SQLite with production settings.
  for (const key of Object.keys(env)) {
    if (/^(CHEESE_ENV|HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_SCHEMA|ADMIN_USERNAME|ADMIN_PASSWORD|LOG_LEVEL|PUBLIC_URL|LOW_STOCK_THRESHOLD_KG|BODY_LIMIT_BYTES|APP_SECRET|TRUST_PROXY|NODE_OPTIONS|RATE_LIMITS|REDIS_URL|RATE_LIMIT_.*)$/.test(key)) delete env[key];
  }
  Object.assign(env, {
    CHEESE_ENV: 'production',
    ADMIN_PASSWORD: `bench-${randomBytes(12).toString('base64url')}`,
    APP_SECRET: appSecret,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    // Rate limits stay on, so their cost is measured; the bench's account (the admin, on
    // Enterprise) gets a plan large enough never to be refused (decisions.md §7: figures are
    // configuration "so an operator, and a benchmark, can set its own plans").
    RATE_LIMITS: 'on',
    RATE_LIMIT_ENTERPRISE_PER_SECOND: '100000000',
    RATE_LIMIT_ENTERPRISE_BURST: '100000000',
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
    const codec = new CursorCodec(new KeyRing({ appSecret }).keys('pagination-cursors'));
    const binding = JSON.stringify(['name', 'asc', {}]);
    const positionAt = (offset: number) => reader.prepare('select sort_name as value, id from cheeses order by sort_name, id limit 1 offset ?').get(offset) as { value: string; id: number };
    if (encodeCheeseCursor(codec, positionAt(LIST_LIMIT - 1), page.total, binding) !== page.nextCursor) {
      throw new BenchError('could not reproduce the service’s own page-1 cursor; has the cursor binding in cheese-read.service.ts changed?');
    }
    const depth = Math.max(LIST_LIMIT, page.total - 2 * LIST_LIMIT);
    const cursor = encodeCheeseCursor(codec, positionAt(depth - 1), page.total, binding);
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
    const measureWith = loadgen === 'wrk' ? measureWithWrk : measure;
    const m = await measureWith(scenario, target, `${target === 'service' ? base : bareBase}${url}`, auth, target === 'service' ? servicePid : barePid, clients, { warmup, duration, cores });
    results.push(m);
    const cpu = `server ${pct(m.serverCpu)} CPU, ${loadgen} ${pct(m.loadgenCpu)}, other ${pct(m.otherCpu)}`;
    console.log(`${fmt(m.rps)} req/s, ${fmt(cpuPerRequest(m))} µs CPU/req, p99 ${fmt(m.p99Ms, 2)} ms (${cpu}; bound by ${boundBy(m, loadgen, cores).short})${m.bad.length ? `  !! ${m.bad.join(', ')}` : ''}`);
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
      ['Scenario', 'Server', 'req/s', 'µs CPU/req', 'mean ms', 'p50 ms', 'p90 ms', 'p99 ms', 'server CPU', `${loadgen} CPU`, 'other CPU', 'bound by'],
      results.map((m) => [m.scenario, m.target, fmt(m.rps), fmt(cpuPerRequest(m)), fmt(m.meanMs, 2), fmt(m.p50Ms, 2), fmt(m.p90Ms, 2), fmt(m.p99Ms, 2), pct(m.serverCpu), pct(m.loadgenCpu), pct(m.otherCpu), boundBy(m, loadgen, cores).short]),
      [false, false, true, true, true, true, true, true, true, true, true, false],
    ),
  );
  console.log(
    [
      `(µs CPU/req: the server's CPU time per response. CPU: % of one core over the measured run; "other": every other process on the machine.`,
      ` bound by: "server" = the server used >= ${SATURATED_CPU}% of its core, so req/s is its capacity; "${loadgen} (tool)" = the load generator was the limit${cores ? ` (its CPU ${cores.loadgen} full)` : ''}, so req/s is a lower bound;`,
      cores ? ` "others on CPU ${cores.server}" = other processes took the server's core; "no CPU full" = latency-bound, as with 1 connection.)\n` : ` "unpinned" = no pinning, so no core can be attributed.)\n`,
    ].join('\n'),
  );

  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  // CPU per response is much less sensitive than req/s to whatever else the machine runs.
  const cpuRatio = (service: Measurement, bare: Measurement) => {
    const s = cpuPerRequest(service);
    const b = cpuPerRequest(bare);
    return s === undefined || b === undefined ? '-' : `${fmt((b / s) * 100, 1)}%`;
  };
  // A ratio against a bare server that was not saturated measures whatever held it back (the
  // load generator, or other processes on its core), not the service.
  const summary: string[] = [];
  const ratioCheck = (label: string, service: Measurement, bare: Measurement, target: number): string[] => {
    const ratio = service.rps / bare.rps;
    const bound = boundBy(bare, loadgen, cores);
    const measured = `${fmt(ratio * 100, 1)}%`;
    if (bound.by === 'server') {
      summary.push(`${label}: ${measured} of bare, target >= ${target * 100}%: ${verdict(ratio >= target)} (valid: bare server at ${pct(bare.serverCpu)} CPU)`);
      return [label, 'service / bare req/s', measured, `>= ${target * 100}%`, verdict(ratio >= target)];
    }
    const invalid = `not valid: bare server at ${pct(bare.serverCpu)} CPU, ${bound.why}`;
    summary.push(`${label}: ${measured} of bare is ${invalid}`);
    return [label, 'service / bare req/s', measured, `>= ${target * 100}%`, invalid.replace(/^not valid/, 'NOT VALID')];
  };
  const checks: string[][] = [
    ratioCheck('GET /v2/cheeses/{id} with an API key', byIdService, byIdBare, TARGETS.getById),
    ['', 'bare / service CPU per request', cpuRatio(byIdService, byIdBare), '(info)', ''],
    ratioCheck(`GET /v2/cheeses?limit=${LIST_LIMIT}`, listService, listBare, TARGETS.list),
    ['', 'bare / service CPU per request', cpuRatio(listService, listBare), '(info)', ''],
  ];
  if (deepService) {
    const ratio = deepService.p99Ms / listService.p99Ms;
    checks.push(['Page at depth vs first page', 'deep / first p99', `${fmt(ratio, 2)}×`, `<= ${TARGETS.depth}×`, verdict(ratio <= TARGETS.depth)]);
    checks.push(['', 'deep / first mean', `${fmt(deepService.meanMs / listService.meanMs, 2)}×`, '(info)', '']);
    if (firstAlone && deepAlone) checks.push(['', 'deep / first median, 1 connection', `${fmt(deepAlone.p50Ms / firstAlone.p50Ms, 2)}×`, '(info)', '']);
  }
  console.log(table(['Check', 'Measure', 'Measured', 'Target', 'Result'], checks, [false, false, true, false, false]));
  console.log(`\nSummary (${loadgen}, ${connections} connections, ${duration}s per run, load average ${load()}):\n${summary.map((line) => `- ${line}`).join('\n')}`);

  const bad = results.filter((m) => m.bad.length > 0);
  await cleanup();
  if (cpuProfDir) console.log(`\nService CPU profile written to ${cpuProfDir}`);
  if (bad.length) {
    console.error(`\nbench: non-200 responses or errors in: ${bad.map((m) => `${m.scenario} (${m.target}): ${m.bad.join(', ')}`).join('; ')}`);
    process.exit(1);
  }
}

main().catch((error: unknown) => fail(error instanceof BenchError ? error.message : String((error as Error)?.stack ?? error)));
