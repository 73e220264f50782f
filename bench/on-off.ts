/**
 * Two services of one checkout, a setting on in one and off in the other, measured on the perf
 * bars (a cheese by id, a page of the list, orders placed): what bench/request-log.ts and
 * bench/tracing.ts share. Each service has its own data directory (and PostgreSQL schema), is
 * seeded, and runs as `npm start` does, pinned like every bench child.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLOCK_TICKS, cpuSample, mainThreadTicks } from './measure.js';
import { orderFixtures } from './order-load.js';
import { benchSchema, freeHelperThreads, freePort, seedAndStaffKey, serviceEnv, startChild, waitForHealth, type Child } from './processes.js';
import { runWrk } from './wrk.js';

export const SCENARIOS = ['by id', 'list', 'orders'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface OnOffService {
  mode: 'on' | 'off';
  /** What is on or off, for names and errors (`REQUEST_LOG`, `tracing`). */
  setting: string;
  base: string;
  child: Child;
  auth: Record<string, string>;
  byId: string;
  script: string;
}

export interface Sample {
  rps: number;
  /** Every thread of the service. */
  cpuUsPerRequest: number;
  /** The event loop's thread alone. */
  loopUsPerRequest: number;
  p99Ms: number;
}

/** Data directories and schemas made, removed by `disposeServices`. */
const dataDirs: string[] = [];
const schemas: Array<() => Promise<void>> = [];

/** `adjust` may edit the environment before the service is seeded and started. */
export async function startOnOffService(setting: string, mode: 'on' | 'off', databaseUrl: string | undefined, extra: NodeJS.ProcessEnv, adjust?: (env: NodeJS.ProcessEnv) => void): Promise<OnOffService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `fromagerie-bench-${setting.toLowerCase().replace(/[^a-z]+/g, '-')}-${mode}-`));
  dataDirs.push(dataDir);
  const port = await freePort();
  const { schema, drop } = await benchSchema(databaseUrl);
  schemas.push(drop);
  const env = serviceEnv({ port, dataDir, environment: 'production', databaseUrl, schema, extra });
  adjust?.(env);
  const key = seedAndStaffKey(env);
  const child = startChild(`service (${setting} ${mode})`, ['--import', 'tsx', 'src/server.ts'], env);
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base, child, 120_000);
  const auth = { authorization: `Bearer ${key}` };
  const list = (await (await fetch(`${base}/v2/cheeses?limit=1`, { headers: auth })).json()) as { items: Array<{ id: number }> };
  const { script } = await orderFixtures(base, key, dataDir);
  return { mode, setting, base, child, auth, byId: `/v2/cheeses/${list.items[0]!.id}`, script };
}

/**
 * One scenario on one service: 1 s of warm-up, then `seconds` measured with the service's CPU
 * time (every thread's). The event loop is pinned to one CPU and the load generator to the other;
 * the service's other threads may use either (freeHelperThreads), alike in both modes: what a
 * setting moves off the event loop is measured in CPU per request, not hidden.
 */
export async function runScenario(service: OnOffService, scenario: Scenario, seconds: number, connections: number): Promise<Sample> {
  const [url, script] = scenario === 'orders' ? [`${service.base}/v2/orders`, service.script] : [`${service.base}${scenario === 'by id' ? service.byId : '/v2/cheeses?limit=20'}`, undefined];
  await runWrk(url, service.auth, 1, connections, script);
  const pid = service.child.process.pid!;
  freeHelperThreads(pid);
  const before = cpuSample(pid);
  const loopBefore = mainThreadTicks(pid) ?? 0;
  const result = await runWrk(url, service.auth, seconds, connections, script);
  const after = cpuSample(pid);
  const loopTicks = (mainThreadTicks(pid) ?? 0) - loopBefore;
  if (result.non2xx || result.socketErrors) throw new Error(`${scenario} (${service.setting} ${service.mode}): ${result.non2xx} non-2xx, ${result.socketErrors} socket errors`);
  const cpuSeconds = ((after.server ?? 0) - (before.server ?? 0)) / CLOCK_TICKS;
  return { rps: result.rps, cpuUsPerRequest: (cpuSeconds / result.requests) * 1e6, loopUsPerRequest: (loopTicks / CLOCK_TICKS / result.requests) * 1e6, p99Ms: result.p99Ms };
}

export async function disposeServices(): Promise<void> {
  for (const drop of schemas) await drop();
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Every scenario on both services, `rounds` times, the order alternating (on, off, off, on…) so the machine's drift falls on both. */
export async function measureInterleaved(services: Record<'on' | 'off', OnOffService>, rounds: number, seconds: number, connections: number): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>();
  for (let round = 0; round < rounds; round++) {
    const order: Array<'on' | 'off'> = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const scenario of SCENARIOS) {
      for (const mode of order) {
        const sample = await runScenario(services[mode], scenario, seconds, connections);
        const key = `${scenario}|${mode}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
      }
    }
  }
  return samples;
}

/** The Markdown table of docs/performance.md: medians per scenario and mode, and on as a share of off. */
export function printOnOffTable(setting: string, samples: Map<string, Sample[]>, rounds: number): void {
  console.log(`\n| scenario | ${setting} | req/s (median of ${rounds}) | CPU µs/req, all threads | of which the event loop | p99 ms | on/off req/s |\n|---|---|---|---|---|---|---|`);
  for (const scenario of SCENARIOS) {
    const off = median(samples.get(`${scenario}|off`)!.map((s) => s.rps));
    for (const mode of ['off', 'on'] as const) {
      const runs = samples.get(`${scenario}|${mode}`)!;
      const rps = median(runs.map((s) => s.rps));
      console.log(`| ${scenario} | ${mode} | ${Math.round(rps).toLocaleString('en-US')} | ${median(runs.map((s) => s.cpuUsPerRequest)).toFixed(0)} | ${median(runs.map((s) => s.loopUsPerRequest)).toFixed(0)} | ${median(runs.map((s) => s.p99Ms)).toFixed(1)} | ${mode === 'on' ? `${((rps / off) * 100).toFixed(1)}%` : ''} |`);
    }
  }
}
