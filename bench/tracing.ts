/**
 * npm run bench:tracing — what OpenTelemetry traces cost (docs/performance.md, "Tracing cost").
 * Two services as `npm start` runs them (SQLite, CHEESE_ENV=production), one with
 * OTEL_EXPORTER_OTLP_ENDPOINT set (exporting to a local OTLP/HTTP receiver in this process that
 * counts and discards) and one without, each on its own data directory, pinned to the same CPU;
 * wrk on the other. The perf bars (a cheese by id, a page of the list, orders placed) run
 * interleaved: on, off, off, on, on, off, so drift of the machine falls on both. Reports req/s,
 * CPU µs per request and p99 per mode, on/off, the spans received, and each service's RSS.
 * `--database-url postgres://…` runs both services on PostgreSQL instead, each in a schema of its own.
 * BENCH_DURATION_S and BENCH_ROUNDS shorten it (a smoke: BENCH_DURATION_S=1 BENCH_ROUNDS=1).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuSample } from './measure.js';
import { benchSchema, cleanup, freePort, pinning, seedAndStaffKey, serviceEnv, startChild, waitForHealth, type Child } from './processes.js';
import { orderFixtures } from './order-load.js';
import { runWrk, wrkAvailable } from './wrk.js';
import { CLOCK_TICKS } from './measure.js';

if (!wrkAvailable) throw new Error('bench/tracing.ts needs wrk (apt-get install -y wrk)');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const { values: args } = parseArgs({ options: { 'database-url': { type: 'string' } } });
const databaseUrl = args['database-url'];
const schemas: Array<() => Promise<void>> = [];

/** The collector: every export answered at once and thrown away; spans counted. */
const exported = { requests: 0, spans: 0, bytes: 0 };
const collector = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    exported.requests++;
    exported.bytes += body.length;
    exported.spans += (body.toString('utf8').match(/"spanId"/g) ?? []).length;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

interface Service {
  mode: 'on' | 'off';
  base: string;
  child: Child;
  auth: Record<string, string>;
  byId: string;
  script: string;
}

async function startService(mode: 'on' | 'off', endpoint: string): Promise<Service> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `fromagerie-bench-tracing-${mode}-`));
  dataDirs.push(dataDir);
  const port = await freePort();
  const { schema, drop } = await benchSchema(databaseUrl);
  schemas.push(drop);
  const env = serviceEnv({ port, dataDir, environment: 'production', databaseUrl, schema, extra: mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } : {} });
  if (mode === 'off') for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  const key = seedAndStaffKey(env);
  const child = startChild(`service (tracing ${mode})`, ['--import', 'tsx', 'src/server.ts'], env);
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
  if (result.non2xx || result.socketErrors) throw new Error(`${scenario} (tracing ${service.mode}): ${result.non2xx} non-2xx, ${result.socketErrors} socket errors`);
  const cpuSeconds = ((after.server ?? 0) - (before.server ?? 0)) / CLOCK_TICKS;
  return { rps: result.rps, cpuUsPerRequest: (cpuSeconds / result.requests) * 1e6, p99Ms: result.p99Ms };
}

const dataDirs: string[] = [];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The service's resident memory now (Linux), in MB. */
function rssMb(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

try {
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  console.log(`Tracing cost on ${databaseUrl ? 'PostgreSQL' : 'SQLite'} — node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}; wrk -t1 -c${CONNECTIONS}, 1 s warm-up then ${DURATION_S} s per run, ${ROUNDS} round(s) interleaved; pinning ${pinning ? 'on (services CPU 1, wrk CPU 0)' : 'off'}.`);
  const services = { on: await startService('on', endpoint), off: await startService('off', endpoint) };
  const started = { on: rssMb(services.on.child.process.pid!), off: rssMb(services.off.child.process.pid!) };
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
  console.log(`\n| scenario | tracing | req/s (median of ${ROUNDS}) | CPU µs/req | p99 ms | on/off req/s |\n|---|---|---|---|---|---|`);
  for (const scenario of scenarios) {
    const off = median(samples.get(`${scenario}|off`)!.map((s) => s.rps));
    for (const mode of ['off', 'on'] as const) {
      const runs = samples.get(`${scenario}|${mode}`)!;
      const rps = median(runs.map((s) => s.rps));
      console.log(`| ${scenario} | ${mode} | ${Math.round(rps).toLocaleString('en-US')} | ${median(runs.map((s) => s.cpuUsPerRequest)).toFixed(0)} | ${median(runs.map((s) => s.p99Ms)).toFixed(1)} | ${mode === 'on' ? `${((rps / off) * 100).toFixed(1)}%` : ''} |`);
    }
  }
  // The last batch goes out within a second of its spans' end.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  console.log(`\nExported: ${exported.spans.toLocaleString('en-US')} spans in ${exported.requests} OTLP/HTTP posts (${(exported.bytes / 1e6).toFixed(1)} MB of JSON).`);
  console.log(`RSS after start: on ${started.on.toFixed(0)} MB, off ${started.off.toFixed(0)} MB; after the runs: on ${rssMb(services.on.child.process.pid!).toFixed(0)} MB, off ${rssMb(services.off.child.process.pid!).toFixed(0)} MB.`);
  if (exported.spans === 0) throw new Error('tracing on exported no span');
} finally {
  await cleanup();
  collector.close();
  for (const drop of schemas) await drop();
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
}
