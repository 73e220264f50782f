/**
 * wrk as the load generator: what a user's load test runs, and a C program, so that on 2 cores
 * the load generator's core is not the limit before the bare server's is (autocannon's was).
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpuFigures, cpuSample, type Measurement, type MeasureOptions } from './measure.js';
import { LOADGEN_CPU, pinning } from './processes.js';

export const wrkAvailable = spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;

export interface WrkResult {
  requests: number;
  /** The measured run's length, from wrk's own figures (requests / Requests/sec). */
  seconds: number;
  rps: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  non2xx: number;
  socketErrors: number;
  /** Lines a Lua script wrote (a `response` hook showing the first refusals, say). */
  scriptLines: string[];
  /** wrk's report as printed. */
  report: string;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const toMs = (value: string, unit: string) => Number(value) * (UNIT_MS[unit] ?? NaN);

/**
 * Parses wrk 4's report (run with --latency):
 *
 *     Thread Stats   Avg      Stdev     Max   +/- Stdev
 *       Latency     4.72ms    9.03ms  94.15ms   94.79%
 *     ...
 *     Latency Distribution
 *        50%    2.21ms
 *        90%    7.95ms
 *        99%   53.96ms
 *     16954 requests in 1.01s, 2.05MB read
 *     Socket errors: connect 0, read 3, write 0, timeout 0      (only when there are any)
 *     Non-2xx or 3xx responses: 12                              (only when there are any)
 *   Requests/sec:  16863.80
 */
export function parseWrk(output: string): WrkResult {
  const time = '([0-9.]+)(us|ms|s|m|h)';
  const mean = new RegExp(`^\\s*Latency\\s+${time}`, 'm').exec(output);
  const distribution = new Map<number, number>();
  const section = /Latency Distribution\n((?:[ \t]+[0-9.]+%[ \t]+[0-9.]+(?:us|ms|s|m|h)[ \t]*\n)+)/.exec(output)?.[1] ?? '';
  for (const line of section.matchAll(new RegExp(`([0-9.]+)%\\s+${time}`, 'g'))) distribution.set(Number(line[1]), toMs(line[2]!, line[3]!));
  const requests = Number(/^\s*(\d+) requests in /m.exec(output)?.[1] ?? NaN);
  const rps = Number(/^Requests\/sec:\s+([0-9.]+)/m.exec(output)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requests,
    seconds: rps > 0 ? requests / rps : NaN,
    rps,
    meanMs: mean ? toMs(mean[1]!, mean[2]!) : NaN,
    p50Ms: distribution.get(50) ?? NaN,
    p90Ms: distribution.get(90) ?? NaN,
    p99Ms: distribution.get(99) ?? NaN,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((n, v) => n + Number(v), 0) : 0,
    scriptLines: output.split('\n').filter((line) => line.startsWith('script: ')),
    report: output,
  };
}

/**
 * Runs `wrk -t1 -c<connections> -d<seconds>s --latency` (one thread, keep-alive connections,
 * no pipelining; a Lua script for other methods and bodies), pinned to the load generator's CPU with taskset (which execs wrk).
 */
export function runWrk(url: string, headers: Record<string, string>, seconds: number, connections: number, luaScript?: string): Promise<WrkResult> {
  const script = luaScript ? ['-s', luaScript] : [];
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '30s', ...script, ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
  const [command, commandArgs] = pinning ? ['taskset', ['-c', LOADGEN_CPU, 'wrk', ...args]] : ['wrk', args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`wrk exited ${code ?? signal}: ${output.slice(0, 500)}`));
      // A script that does not load leaves wrk sending plain GETs: not the load asked for.
      if (luaScript && output.includes(`${luaScript}:`)) return reject(new Error(`wrk could not run ${luaScript}:\n${output.slice(0, 500)}`));
      const result = parseWrk(output);
      if (!Number.isFinite(result.requests) || !Number.isFinite(result.rps)) return reject(new Error(`could not read wrk's report:\n${output.slice(0, 1000)}`));
      resolve(result);
    });
  });
}

/** The same measurement as measure() in measure.ts, with wrk as the load. */
export async function measureWithWrk(scenario: string, target: 'service' | 'bare', url: string, headers: Record<string, string>, serverPid: number, clients: number, timing: MeasureOptions): Promise<Measurement> {
  if (timing.warmup > 0) await runWrk(url, headers, Math.max(1, Math.round(timing.warmup)), clients);
  // wrk's CPU is this process's "children" time: wrk is the only child that exits in between.
  const before = cpuSample(serverPid);
  const result = await runWrk(url, headers, timing.duration, clients);
  const after = cpuSample(serverPid);
  const bad: string[] = [];
  if (result.non2xx) bad.push(`${result.non2xx} × non-2xx`);
  if (result.socketErrors) bad.push(`${result.socketErrors} socket errors`);
  if (result.requests === 0) bad.push('no responses at all');
  return {
    scenario,
    target,
    requests: result.requests,
    rps: result.rps,
    meanMs: result.meanMs,
    p50Ms: result.p50Ms,
    p90Ms: result.p90Ms,
    p99Ms: result.p99Ms,
    // Over wrk's own run, not the wall time around it (process start and exit): the server
    // is idle outside it, and µs CPU/req stays CPU time / responses.
    ...cpuFigures(before, after, result.seconds > 0 ? result.seconds : timing.duration, 'child', timing.cores),
    bad,
  };
}
