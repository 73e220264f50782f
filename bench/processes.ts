/** Child processes of a bench run: start (pinned), wait for, talk to, and always stop them. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------- children and cleanup

export interface Child {
  name: string;
  process: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}
const children: Child[] = [];
/** What cleanup must remove and how long children get to stop; set by run.ts. */
export const runState: { dataDir: string | undefined; stopGraceMs: number } = { dataDir: undefined, stopGraceMs: 5_000 };

export function alive(child: Child): boolean {
  return child.process.exitCode === null && child.process.signalCode === null;
}

export async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (!alive(child)) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

let cleanedUp = false;
export async function cleanup(): Promise<void> {
  if (cleanedUp) return;
  cleanedUp = true;
  await Promise.all(children.map((c) => stopChild(c, runState.stopGraceMs)));
  if (runState.dataDir) fs.rmSync(runState.dataDir, { recursive: true, force: true });
}

// Last resort: whatever happens, no child outlives the run.
process.on('exit', () => {
  for (const child of children) if (alive(child)) child.process.kill('SIGKILL');
  if (runState.dataDir && !cleanedUp) fs.rmSync(runState.dataDir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}

export class BenchError extends Error {}

export async function fail(message: string): Promise<never> {
  console.error(`\nbench: ${message}`);
  for (const child of children) {
    const tail = child.output.join('').slice(-3000).trim();
    if (tail) console.error(`--- last output of ${child.name} ---\n${tail}`);
  }
  await cleanup();
  process.exit(1);
}

// ---------------------------------------------------------------- pinning

export const tasksetAvailable = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
export const pinning = tasksetAvailable && os.availableParallelism() >= 2;
export const SERVER_CPU = '1';
export const LOADGEN_CPU = '0';

export function pinnedCommand(command: string, commandArgs: string[]): [string, string[]] {
  return pinning ? ['taskset', ['-c', SERVER_CPU, command, ...commandArgs]] : [command, commandArgs];
}

/**
 * The service's threads other than its event loop (V8's helpers, libuv's pool, the request log's
 * writer: whichever exist now) may run on every CPU; the event loop stays on SERVER_CPU. A thread
 * inherits its creator's CPUs, so this is called once the service has made its threads (after a
 * warm-up). Returns how many threads were freed.
 */
export function freeHelperThreads(pid: number): number {
  if (!pinning) return 0;
  const cpus = `0-${os.availableParallelism() - 1}`;
  const helpers = fs.readdirSync(`/proc/${pid}/task`).filter((tid) => tid !== String(pid));
  for (const tid of helpers) spawnSync('taskset', ['-p', '-c', cpus, tid], { stdio: 'ignore' });
  return helpers.length;
}

/** A child started elsewhere (taskset, haproxy, redis-server): stopped by cleanup like the others. */
export function adopt(child: Child): Child {
  children.push(child);
  return child;
}

export function startChild(name: string, commandArgs: string[], env: NodeJS.ProcessEnv): Child {
  const [command, finalArgs] = pinnedCommand(process.execPath, commandArgs);
  // taskset execs node, so the pid is the server's own.
  const proc = spawn(command, finalArgs, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child = { name, process: proc, output, exited };
  children.push(child);
  return child;
}

// ---------------------------------------------------------------- small helpers

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Captured {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

/** Headers node's http server writes by itself; everything else the bare server replays. */
export const NODE_ADDED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export function get(url: string, headers: Record<string, string>, timeoutMs = 120_000): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          const name = response.rawHeaders[i]!;
          if (!NODE_ADDED.has(name.toLowerCase())) pairs.push([name, response.rawHeaders[i + 1]!]);
        }
        resolve({ status: response.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks) });
      });
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out`)));
    request.on('error', reject);
  });
}

export async function waitForHealth(base: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(child)) throw new BenchError(`${child.name} exited with code ${child.process.exitCode} before it was ready`);
    try {
      if ((await get(`${base}/v2/health`, {}, 2_000)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new BenchError(`${child.name} was not ready within ${timeoutMs / 1000}s`);
}

export async function waitForLine(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(child.output.join(''));
    if (match) return match;
    if (!alive(child)) throw new BenchError(`${child.name} exited with code ${child.process.exitCode}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new BenchError(`${child.name} did not print ${pattern} within ${timeoutMs / 1000}s`);
}

export function runCli(cliArgs: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...cliArgs], { cwd: ROOT, env, encoding: 'utf8', timeout: 180_000 });
  if (result.status !== 0) throw new BenchError(`cli ${cliArgs.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

// ---------------------------------------------------------------- PostgreSQL

async function onPostgres(databaseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh schema for one bench run on the PostgreSQL given (undefined on SQLite), and how to drop it. */
export async function benchSchema(databaseUrl: string | undefined): Promise<{ schema: string | undefined; drop(): Promise<void> }> {
  if (!databaseUrl) return { schema: undefined, drop: async () => {} };
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  await onPostgres(databaseUrl, `create schema ${schema}`);
  return { schema, drop: () => onPostgres(databaseUrl, `drop schema if exists ${schema} cascade`) };
}

// ---------------------------------------------------------------- the service under test

/** The environment a bench runs the service with: its own data directory, rate limits and the connection cap off. */
export function serviceEnv(options: { port: number; dataDir: string; environment: 'production' | 'development'; databaseUrl: string | undefined; schema: string | undefined; extra?: NodeJS.ProcessEnv }): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    CHEESE_ENV: options.environment,
    PORT: String(options.port),
    DATA_DIR: options.dataDir,
    ADMIN_PASSWORD: 'bench operator passphrase 42',
    APP_SECRET: 'bench-secret-bench-secret-bench-secret-01',
    LOG_LEVEL: 'warn',
    RATE_LIMITS: 'off',
    MAX_CONNECTIONS_PER_CLIENT: '0',
    ...options.extra,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl, DATABASE_SCHEMA: options.schema } : {}),
  };
}

/** Seeds the catalogue (creating the admin) and returns a staff key. */
export function seedAndStaffKey(env: NodeJS.ProcessEnv): string {
  runCli(['db:seed'], env);
  return runCli(['api-keys', 'create', '--user', 'admin', '--scopes', 'admin', '--name', 'bench', '--quiet'], env).trim().split('\n').at(-1)!;
}
