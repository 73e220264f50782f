import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A PostgreSQL cluster and a Redis server of a test's own, on random ports, so a test may stop,
 * kill or pause them: the machine's shared services are never signalled. Debian's binaries;
 * initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
 */

const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.length > 0 ? path.join(root, versions[0]!, 'bin') : '';
})();

export const privateServicesAvailable = PG_BIN !== '' && fs.existsSync(path.join(PG_BIN, 'initdb')) && commandExists('redis-server');

function commandExists(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A port nobody listens on now (the kernel's choice). */
export async function freeTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const asRoot = process.getuid?.() === 0;
/** Runs a PostgreSQL binary as the cluster's owner. */
function pgCommand(binary: string, args: string[]): [string, string[]] {
  const full = path.join(PG_BIN, binary);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
}

function runPg(binary: string, args: string[], timeoutMs = 60_000): void {
  const [command, argv] = pgCommand(binary, args);
  execFileSync(command, argv, { stdio: 'pipe', timeout: timeoutMs });
}

export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** The URL of a database of this cluster. */
  urlOf(database: string): string;
  createDatabase(name: string): void;
  /** `pg_ctl stop -m immediate` (a crash: no shutdown checkpoint, clients cut at once). */
  stopImmediate(): void;
  /** `pg_ctl stop -m fast`. */
  stop(): void;
  /** Starts it again on the same port and data; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  destroy(): void;
}

/** initdb into a temporary directory and start it on a random port (about 1–2 s). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (!privateServicesAvailable) throw new Error('PostgreSQL binaries (initdb) or redis-server are missing');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-pg-'));
  const data = path.join(dir, 'data');
  fs.mkdirSync(data);
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  runPg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freeTcpPort();
  // No fsync: a killed server loses nothing the kernel holds, and only a machine crash would
  // lose more. synchronous_commit stays on: with it off, `stopImmediate()` lost commits
  // PostgreSQL had already acknowledged (an order answered 201, then 404), which is exactly
  // what the crash tests must be able to see. Sockets in the temporary directory only.
  const options = `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=64MB`;
  const log = path.join(dir, 'server.log');
  const start = async () => {
    runPg('pg_ctl', ['-D', data, '-o', options, '-l', log, '-w', '-t', '30', 'start']);
    await waitForPort(port, 30_000);
  };
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let stopped = false;
  return {
    port,
    url,
    urlOf: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    createDatabase: (name) => {
      const [command, argv] = pgCommand('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]);
      execFileSync(command, argv, { stdio: 'pipe' });
    },
    stopImmediate: () => {
      runPg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      stopped = true;
    },
    stop: () => {
      runPg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      stopped = true;
    },
    start: async () => {
      await start();
      stopped = false;
    },
    destroy: () => {
      if (!stopped) {
        try {
          runPg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        } catch {
          // already down
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** SIGSTOP: the server keeps its connections but answers nothing (a hung Redis). */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Kills it (SIGKILL); `start()` brings up a new one on the same port. */
  kill(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** `redis-server` on a random port, keeping nothing on disk. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freeTcpPort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitForPort(port, 10_000);
  };
  const kill = async () => {
    const current = child;
    child = undefined;
    if (!current || current.exitCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    kill,
    start,
    destroy: async () => {
      child?.kill('SIGCONT');
      await kill();
    },
  };
}

/** Resolves once something accepts TCP connections on the port. */
export async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
