/** Load (wrk, or autocannon), CPU accounting from /proc, and the tables the run prints. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';

// CPU accounting from /proc (Linux): the server's own time, the load generator's, and everybody else's.
export const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/**
 * CPU time of a process in clock ticks: its own (utime + stime), or that of its children
 * that have exited and been waited for (cutime + cstime). wrk is such a child: the
 * difference in 'children' across a wrk run is exactly wrk's CPU time, start to exit.
 */
export function processTicks(pid: number | 'self', which: 'own' | 'children' = 'own'): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return which === 'own' ? Number(fields[11]) + Number(fields[12]) : Number(fields[13]) + Number(fields[14]);
  } catch {
    return undefined;
  }
}

/** CPU time, in clock ticks, of a process's main thread alone (a Node service's event loop). */
export function mainThreadTicks(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Busy ticks (all but idle and iowait; steal counts as busy) of the machine ('cpu') and of each CPU ('cpu0', …). */
export function busyTicks(): Map<string, number> {
  const busy = new Map<string, number>();
  try {
    for (const line of fs.readFileSync('/proc/stat', 'utf8').split('\n')) {
      if (!line.startsWith('cpu')) continue;
      const [name, ...rest] = line.trim().split(/\s+/);
      const v = rest.map(Number);
      busy.set(name!, v.slice(0, 8).reduce((a, b) => a + b, 0) - (v[3] ?? 0) - (v[4] ?? 0));
    }
  } catch {
    // not Linux: no machine figures
  }
  return busy;
}

export interface CpuSample {
  server?: number | undefined;
  self?: number | undefined;
  children?: number | undefined;
  busy: Map<string, number>;
  at: number;
}
export function cpuSample(serverPid: number): CpuSample {
  return { server: processTicks(serverPid), self: processTicks('self'), children: processTicks('self', 'children'), busy: busyTicks(), at: performance.now() };
}

/**
 * The CPU columns of a run. The server's and the load generator's share are over
 * `loadSeconds`, the load's own duration (the server is idle outside it, and µs CPU/req stays
 * CPU time / responses); the machine's and each CPU's busy time, which run on regardless, over
 * the wall time between the samples. The load generator is this process (autocannon) or a
 * child that exited between the samples (wrk).
 */
export function cpuFigures(before: CpuSample, after: CpuSample, loadSeconds: number, loadgen: 'self' | 'child', cores: { server: string; loadgen: string } | undefined) {
  const wall = (after.at - before.at) / 1000;
  const delta = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : b - a);
  const server = delta(before.server, after.server);
  const generator = loadgen === 'self' ? delta(before.self, after.self) : delta(before.children, after.children);
  const machine = delta(before.busy.get('cpu'), after.busy.get('cpu'));
  const share = (ticks: number | undefined, seconds: number) => (ticks === undefined ? undefined : (ticks / CLOCK_TICKS / seconds) * 100);
  const busy = (cpu: string) => share(delta(before.busy.get(cpu), after.busy.get(cpu)), wall);
  return {
    serverCpu: share(server, loadSeconds),
    loadgenCpu: share(generator, loadSeconds),
    otherCpu: machine === undefined || server === undefined || generator === undefined ? undefined : Math.max(0, share(machine - server - generator, wall)!),
    serverCoreBusy: cores ? busy(`cpu${cores.server}`) : undefined,
    loadgenCoreBusy: cores ? busy(`cpu${cores.loadgen}`) : undefined,
  };
}

// ---------------------------------------------------------------- load

export interface Measurement {
  scenario: string;
  target: 'service' | 'bare';
  requests: number;
  rps: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** % of one core, over the measured run. */
  serverCpu: number | undefined;
  loadgenCpu: number | undefined;
  otherCpu: number | undefined;
  /** With pinning: how busy the server's and the load generator's CPUs were, whoever used them. */
  serverCoreBusy: number | undefined;
  loadgenCoreBusy: number | undefined;
  bad: string[];
}

export function runAutocannon(url: string, headers: Record<string, string>, seconds: number, clients: number, latencies?: number[], statuses?: Map<number, number>): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections: clients, duration: seconds, pipelining: 1, timeout: 30, headers }, (error, result) => (error ? reject(error) : resolve(result)));
    if (latencies && statuses) {
      // autocannon's own histogram has 1 ms resolution; keep every sample for sub-ms percentiles.
      instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
        latencies.push(responseTime);
        statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
      });
    }
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export interface MeasureOptions {
  warmup: number;
  duration: number;
  /** The pinned CPUs, when pinning is on. */
  cores: { server: string; loadgen: string } | undefined;
}

export async function measure(scenario: string, target: 'service' | 'bare', url: string, headers: Record<string, string>, serverPid: number, clients: number, timing: MeasureOptions): Promise<Measurement> {
  const { warmup, duration } = timing;
  if (warmup > 0) await runAutocannon(url, headers, warmup, clients);
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const before = cpuSample(serverPid);
  const result = await runAutocannon(url, headers, duration, clients, latencies, statuses);
  const after = cpuSample(serverPid);
  const seconds = (after.at - before.at) / 1000;
  latencies.sort((a, b) => a - b);
  const bad: string[] = [];
  for (const [status, count] of statuses) if (status !== 200) bad.push(`${count} × HTTP ${status}`);
  if (result.errors) bad.push(`${result.errors} connection errors`);
  if (result.timeouts) bad.push(`${result.timeouts} timeouts`);
  if (latencies.length === 0) bad.push('no responses at all');
  return {
    scenario,
    target,
    requests: latencies.length,
    rps: latencies.length / seconds,
    meanMs: latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1),
    p50Ms: percentile(latencies, 50),
    p90Ms: percentile(latencies, 90),
    p99Ms: percentile(latencies, 99),
    ...cpuFigures(before, after, seconds, 'self', timing.cores),
    bad,
  };
}

// ---------------------------------------------------------------- output

export function table(header: string[], body: string[][], alignRight: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (alignRight[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (alignRight[i] ? `${'-'.repeat(w + 1)}:` : `${'-'.repeat(w + 2)}`)).join('|')}|`;
  return [line(header), rule, ...body.map(line)].join('\n');
}
export const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
export const pct = (n: number | undefined) => (n === undefined ? '-' : `${Math.round(n)}%`);
/** Server CPU time per response, in µs (serverCpu and rps are over the same seconds). */
export const cpuPerRequest = (m: Measurement) => (m.serverCpu === undefined || !(m.rps > 0) ? undefined : (m.serverCpu / 100 / m.rps) * 1e6);

// ---------------------------------------------------------------- who was the bottleneck

/** At or above this share of its core a process was the bottleneck of its run; below it, it was waiting on something else. */
export const SATURATED_CPU = 95;

export interface Bound {
  /** server: the figure is the server's; loadgen: the load generator's limit; others-*: a CPU taken by other processes; none: no CPU was full (latency-bound, e.g. 1 connection). */
  by: 'server' | 'loadgen' | 'others-server-cpu' | 'others-loadgen-cpu' | 'none' | 'unknown';
  /** For the table's "bound by" column. */
  short: string;
  /** For a sentence: why the server was not saturated. */
  why: string;
}

export function boundBy(m: Measurement, loadgen: string, cores: { server: string; loadgen: string } | undefined): Bound {
  const full = (n: number | undefined) => n !== undefined && n >= SATURATED_CPU;
  if (m.serverCpu === undefined) return { by: 'unknown', short: '?', why: 'server CPU unknown (no /proc)' };
  if (full(m.serverCpu)) return { by: 'server', short: 'server', why: 'server saturated' };
  if (full(m.loadgenCpu)) return { by: 'loadgen', short: `${loadgen} (tool)`, why: `load generator bound (${loadgen} at ${pct(m.loadgenCpu)} CPU)` };
  if (cores && full(m.serverCoreBusy)) {
    return { by: 'others-server-cpu', short: `others on CPU ${cores.server}`, why: `its CPU ${cores.server} was ${pct(m.serverCoreBusy)} busy, ${pct(m.serverCoreBusy! - m.serverCpu)} of it other processes` };
  }
  if (cores && full(m.loadgenCoreBusy)) {
    return { by: 'others-loadgen-cpu', short: `others on CPU ${cores.loadgen} (tool)`, why: `load generator bound (${loadgen} got ${pct(m.loadgenCpu)} of CPU ${cores.loadgen}, other processes took the rest)` };
  }
  if (!cores) return { by: 'unknown', short: 'unpinned', why: 'not pinned: servers and load generator share the CPUs' };
  return { by: 'none', short: 'no CPU full', why: 'neither CPU saturated (latency-bound)' };
}
export const load = () => os.loadavg().map((n) => n.toFixed(2)).join(' ');
