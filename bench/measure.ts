/** Load (autocannon), CPU accounting from /proc, and the tables the run prints. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';

// CPU accounting from /proc (Linux): the server's own time, ours, and everybody else's.
export const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

export function processTicks(pid: number | 'self'): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return undefined;
  }
}

export function machineBusyTicks(): number | undefined {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return total - (v[3] ?? 0) - (v[4] ?? 0); // minus idle and iowait
  } catch {
    return undefined;
  }
}

export interface CpuSample {
  server?: number | undefined;
  self?: number | undefined;
  machine?: number | undefined;
  at: number;
}
export function cpuSample(serverPid: number): CpuSample {
  return { server: processTicks(serverPid), self: processTicks('self'), machine: machineBusyTicks(), at: performance.now() };
}
export function percentOfCore(before: number | undefined, after: number | undefined, seconds: number): number | undefined {
  return before === undefined || after === undefined ? undefined : ((after - before) / CLOCK_TICKS / seconds) * 100;
}

// ---------------------------------------------------------------- load

export interface Measurement {
  scenario: string;
  target: 'service' | 'bare';
  requests: number;
  rps: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  serverCpu: number | undefined;
  loadgenCpu: number | undefined;
  otherCpu: number | undefined;
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

export async function measure(scenario: string, target: 'service' | 'bare', url: string, headers: Record<string, string>, serverPid: number, clients: number, timing: { warmup: number; duration: number }): Promise<Measurement> {
  const { warmup, duration } = timing;
  if (warmup > 0) await runAutocannon(url, headers, warmup, clients);
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const before = cpuSample(serverPid);
  const result = await runAutocannon(url, headers, duration, clients, latencies, statuses);
  const after = cpuSample(serverPid);
  const seconds = (after.at - before.at) / 1000;
  latencies.sort((a, b) => a - b);
  const serverCpu = percentOfCore(before.server, after.server, seconds);
  const loadgenCpu = percentOfCore(before.self, after.self, seconds);
  const machine = percentOfCore(before.machine, after.machine, seconds);
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
    p99Ms: percentile(latencies, 99),
    serverCpu,
    loadgenCpu,
    otherCpu: machine === undefined || serverCpu === undefined || loadgenCpu === undefined ? undefined : Math.max(0, machine - serverCpu - loadgenCpu),
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
export const cpuPerRequest = (m: Measurement) => (m.serverCpu === undefined ? undefined : (m.serverCpu / 100 / m.rps) * 1e6);
export const load = () => os.loadavg().map((n) => n.toFixed(2)).join(' ');
