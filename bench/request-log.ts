/**
 * npm run bench:request-log — what recording every request costs (docs/performance.md,
 * "Request log"). Two services as `npm start` runs them (SQLite, CHEESE_ENV=production, so
 * REQUEST_LOG_BODIES=errors), one with REQUEST_LOG=on and one with off, each on its own data
 * directory, pinned to the same CPU; wrk on the other. The perf bars (a cheese by id, a page of
 * the list, orders placed) run interleaved: on, off, off, on, on, off, so drift of the machine
 * falls on both. Reports req/s, CPU µs per request and p99 per mode, and on/off.
 * Also: how soon `GET /v2/request-logs?after=…&wait=25` answers after a 404 is answered.
 * `--database-url postgres://…` runs both services on PostgreSQL instead, each in a schema of its own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuSample } from './measure.js';
import { benchSchema, cleanup, freePort, pinning, seedAndStaffKey, serviceEnv, startChild, waitForHealth, type Child } from './processes.js';
import { orderFixtures } from './order-load.js';
import { runWrk, wrkAvailable } from './wrk.js';
import { CLOCK_TICKS } from './measure.js';

if (!wrkAvailable) throw new Error('bench/request-log.ts needs wrk (apt-get install -y wrk)');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 20;
const ROUNDS = 3;
const { values: args } = parseArgs({ options: { 'database-url': { type: 'string' } } });
const databaseUrl = args['database-url'];
const schemas: Array<() => Promise<void>> = [];

interface Service {
  mode: 'on' | 'off';
  base: string;
  child: Child;
  auth: Record<string, string>;
  byId: string;
  script: string;
}

async function startService(mode: 'on' | 'off'): Promise<Service> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `fromagerie-bench-log-${mode}-`));
  dataDirs.push(dataDir);
  const port = await freePort();
  const { schema, drop } = await benchSchema(databaseUrl);
  schemas.push(drop);
  const env = serviceEnv({ port, dataDir, environment: 'production', databaseUrl, schema, extra: { REQUEST_LOG: mode } });
  const key = seedAndStaffKey(env);
  const child = startChild(`service (REQUEST_LOG=${mode})`, ['--import', 'tsx', 'src/server.ts'], env);
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base, child, 120_000);
  const auth = { authorization: `Bearer ${key}` };
  const list = (await (await fetch(`${base}/v2/cheeses?limit=1`, { headers: auth })).json()) as { items: Array<{ id: number }> };
  const { script } = await orderFixtures(base, key, dataDir);
  return { mode, base, child, auth, byId: `/v2/cheeses/${list.items[0]!.id}`, script };
}

interface Sample {
  rps: number;
  cpuUsPerRequest: number;
  p99Ms: number;
}

async function run(service: Service, scenario: string): Promise<Sample> {
  const [url, script] = scenario === 'orders' ? [`${service.base}/v2/orders`, service.script] : [`${service.base}${scenario === 'by id' ? service.byId : '/v2/cheeses?limit=20'}`, undefined];
  await runWrk(url, service.auth, 1, CONNECTIONS, script);
  const pid = service.child.process.pid!;
  const before = cpuSample(pid);
  const result = await runWrk(url, service.auth, DURATION_S, CONNECTIONS, script);
  const after = cpuSample(pid);
  if (result.non2xx || result.socketErrors) throw new Error(`${scenario} (REQUEST_LOG=${service.mode}): ${result.non2xx} non-2xx, ${result.socketErrors} socket errors`);
  const cpuSeconds = ((after.server ?? 0) - (before.server ?? 0)) / CLOCK_TICKS;
  return { rps: result.rps, cpuUsPerRequest: (cpuSeconds / result.requests) * 1e6, p99Ms: result.p99Ms };
}

const dataDirs: string[] = [];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function tailLatency(service: Service): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    const head = (await (await fetch(`${service.base}/v2/request-logs?after=now`, { headers: service.auth })).json()) as { nextAfter: string };
    const held = fetch(`${service.base}/v2/request-logs?after=${encodeURIComponent(head.nextAfter)}&wait=25&status=404`, { headers: service.auth }).then(async (response) => {
      await response.text();
      return performance.now();
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const answered = await fetch(`${service.base}/v2/orders/99999999`, { headers: service.auth }).then(async (response) => {
      await response.text();
      return performance.now();
    });
    samples.push((await held) - answered);
  }
  return samples.sort((a, b) => a - b);
}

try {
  console.log(`Request log cost on ${databaseUrl ? 'PostgreSQL' : 'SQLite'} — node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}; wrk -t1 -c${CONNECTIONS}, 1 s warm-up then ${DURATION_S} s per run, ${ROUNDS} rounds interleaved; pinning ${pinning ? 'on (services CPU 1, wrk CPU 0)' : 'off'}.`);
  const services = { on: await startService('on'), off: await startService('off') };
  const scenarios = ['by id', 'list', 'orders'];
  const samples = new Map<string, Sample[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const order: Array<'on' | 'off'> = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const scenario of scenarios) {
      for (const mode of order) {
        const sample = await run(services[mode], scenario);
        const key = `${scenario}|${mode}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
      }
    }
  }
  console.log('\n| scenario | REQUEST_LOG | req/s (median of 3) | CPU µs/req | p99 ms | on/off req/s |\n|---|---|---|---|---|---|');
  for (const scenario of scenarios) {
    const off = median(samples.get(`${scenario}|off`)!.map((s) => s.rps));
    for (const mode of ['off', 'on'] as const) {
      const runs = samples.get(`${scenario}|${mode}`)!;
      const rps = median(runs.map((s) => s.rps));
      console.log(`| ${scenario} | ${mode} | ${Math.round(rps).toLocaleString('en-US')} | ${median(runs.map((s) => s.cpuUsPerRequest)).toFixed(0)} | ${median(runs.map((s) => s.p99Ms)).toFixed(1)} | ${mode === 'on' ? `${((rps / off) * 100).toFixed(1)}%` : ''} |`);
    }
  }
  const tail = await tailLatency(services.on);
  console.log(`\nA held tail (after=…&wait=25&status=404) answered after the 404's own answer arrived: p50 ${tail[10]!.toFixed(0)} ms, p95 ${tail[18]!.toFixed(0)} ms, max ${tail[19]!.toFixed(0)} ms (20 samples).`);
  const recorded = (await (await fetch(`${services.on.base}/v2/request-logs?limit=1`, { headers: services.on.auth })).json()) as { items: unknown[] };
  if (recorded.items.length === 0) throw new Error('REQUEST_LOG=on recorded nothing');
} finally {
  await cleanup();
  for (const drop of schemas) await drop();
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
}
