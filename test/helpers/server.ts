import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { TEST_CUSTOMER } from '../../src/bootstrap.js';
import { apiKey, bearer, HttpClient } from './http.js';
import { freePort } from './oauth.js';

/** `npm start`'s server as a child process on `port`, resolved once it prints `until` (a worker prints no docs link). */
export async function startServer(env: NodeJS.ProcessEnv, port: number, until = 'Interactive docs'): Promise<ChildProcess & { output(): string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, PORT: String(port) } });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 60_000;
  while (!output.includes(until)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Object.assign(child, { output: () => output });
}

/** A server process started as `npm start` starts it, on a free port, with an HTTP client for it. */
export interface RunningServer {
  base: string;
  http: HttpClient;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  /** Sends `signal` (SIGKILL: a crash) and resolves with the exit code (SIGKILL after 20 s if it has not exited). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function runServer(env: NodeJS.ProcessEnv, until = 'Interactive docs'): Promise<RunningServer> {
  const port = await freePort();
  const child = await startServer(env, port, until);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    http: new HttpClient(base),
    output: () => child.output(),
    async stop(signal = 'SIGTERM') {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The sandbox's documented test customer (README, "Sandbox") signs in and makes an API key: its header. */
export async function sandboxCustomerKey(http: HttpClient, scopes: string[]): Promise<Record<string, string>> {
  const login = await http.post<{ token: string }>('/v2/customer/login', { json: { username: TEST_CUSTOMER.username, password: TEST_CUSTOMER.password } });
  if (login.status !== 200) throw new Error(`the sandbox customer could not sign in: ${login.status} ${login.text}`);
  const key = await http.post<{ key: string }>('/v2/api-keys', { headers: bearer(login.body.token), json: { scopes } });
  if (key.status !== 201) throw new Error(`no API key for the sandbox customer: ${key.status} ${key.text}`);
  return apiKey(key.body.key);
}

export interface ProcessOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

function settle(command: string[], env: NodeJS.ProcessEnv, timeout: number, input?: string): Promise<ProcessOutcome> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, command, { env, timeout }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: unknown }).code as number) ?? 1 : 0, stdout, stderr }),
    );
    child.stdin?.end(input ?? '');
  });
}

/** The operator CLI (bin/fromagerie.js) as a user runs it; `input` on its stdin. Never rejects. */
export function runCli(env: NodeJS.ProcessEnv, args: string[], input?: string): Promise<ProcessOutcome> {
  return settle(['bin/fromagerie.js', ...args], env, 60_000, input);
}

/** The server started as `npm start` starts it, for a start expected to fail: its exit code and output. */
export async function serverExit(env: NodeJS.ProcessEnv): Promise<ProcessOutcome> {
  return settle(['--import', 'tsx', 'src/server.ts'], { ...env, PORT: String(await freePort()) }, 60_000);
}
