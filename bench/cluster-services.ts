/**
 * What bench/cluster.ts runs besides the instances: a PostgreSQL cluster of its own with
 * production durability (fsync and synchronous_commit on: the test clusters of
 * test/helpers/private-services.ts turn both off, which would flatter order placement),
 * HAProxy on a config of deploy/haproxy.cfg's shape, and CPU time of any process by pid.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLOCK_TICKS, processTicks } from './measure.js';
import { adopt, freePort, type Child } from './processes.js';
import { loopbackHaproxyConfig } from '../test/helpers/haproxy-config.js';
import net from 'node:net';
import { spawn } from 'node:child_process';

const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.length > 0 ? path.join(root, versions[0]!, 'bin') : '';
})();
const asRoot = process.getuid?.() === 0;

function runPg(binary: string, args: string[]): void {
  const full = path.join(PG_BIN, binary);
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
  execFileSync(command, argv, { stdio: 'pipe', timeout: 60_000 });
}

export const haproxyAvailable = spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).error === undefined;
export const postgresAvailable = PG_BIN !== '' && fs.existsSync(path.join(PG_BIN, 'initdb'));

export interface BenchPostgres {
  url: string;
  /** The postmaster's pid: its backends are its children. */
  pid(): number;
  /** Stops it and removes its files (synchronous: safe in an exit handler). */
  stop(): void;
}

/**
 * initdb and start on a free port: PostgreSQL 15's defaults (fsync, synchronous_commit and
 * full_page_writes on, shared_buffers 128MB), max_connections 200 for 3 instances × pool.
 */
export async function startBenchPostgres(): Promise<BenchPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-cluster-pg-'));
  const data = path.join(dir, 'pgdata');
  fs.mkdirSync(data, { recursive: true });
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  runPg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const options = `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=200`;
  runPg('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'pg.log'), '-w', '-t', '60', 'start']);
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pid: () => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        runPg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        // already gone
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(socket.end() !== undefined));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
}

/** redis-server on a free port, nothing on disk; stopped with the other children. */
export async function startBenchRedis(): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const child = adopt({ name: 'redis', process: proc, output: [], exited: new Promise((resolve) => proc.once('exit', resolve)) });
  await waitForPort(port, 10_000);
  return { url: `redis://127.0.0.1:${port}`, child };
}

/** deploy/haproxy.cfg on loopback (test/helpers/haproxy-config.ts), without a log line per request. */
export function haproxyConfig(port: number, servers: number[]): string {
  return loopbackHaproxyConfig({ port, servers: servers.map((p, i) => ({ name: `app${i + 1}`, port: p })), withoutRequestLog: true });
}

/** HAProxy in the foreground on `servers`, pinned to `cpu` when given (taskset execs it: the pid is haproxy's). */
export function startHaproxy(dir: string, port: number, servers: number[], cpu: string | undefined): Child {
  const file = path.join(dir, `haproxy-${servers.length}.cfg`);
  fs.writeFileSync(file, haproxyConfig(port, servers));
  const args = ['-db', '-f', file];
  const proc = cpu ? spawn('taskset', ['-c', cpu, 'haproxy', ...args], { stdio: ['ignore', 'pipe', 'pipe'] }) : spawn('haproxy', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  proc.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
  proc.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
  return adopt({ name: `haproxy(${servers.length})`, process: proc, output, exited: new Promise((resolve) => proc.once('exit', resolve)) });
}

/** A server instance, pinned to `cpu` when given (taskset execs node: the pid is the server's), else free to run on any. */
export function startInstance(name: string, env: NodeJS.ProcessEnv, cpu: string | undefined): Child {
  const node = [process.execPath, '--import', 'tsx', 'src/server.ts'];
  const [command, argv] = cpu === undefined ? [node[0]!, node.slice(1)] : ['taskset', ['-c', cpu, ...node]];
  const proc = spawn(command, argv, { cwd: path.resolve(import.meta.dirname, '..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (c: Buffer) => {
    output.push(c.toString());
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  return adopt({ name, process: proc, output, exited: new Promise((resolve) => proc.once('exit', resolve)) });
}

/** The pids of a process's children (PostgreSQL's backends are the postmaster's). */
export function childrenOf(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** CPU seconds of a group of processes, summed (a process that exits in between is lost: backends are pooled, so none do). */
export function cpuSeconds(pids: readonly number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, (processTicks(pid) ?? 0) / CLOCK_TICKS]));
}

export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

export const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-cluster-'));
