import net from 'node:net';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';

const run = promisify(execFile);
let storage: TestStorage;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  storage = await createTestStorage();
  env = processEnvFor(storage);
});
afterAll(() => storage.dispose());

/**
 * The tests below start the server (a child process loading the whole app through tsx: about
 * 2.5-5 s) or run the CLI (its real entry, bin/fromagerie.js: 1.4-2 s a call on an idle
 * machine, several times that on a loaded one), and were seen taking up to 29 s of the default
 * 30 s on a loaded 2-core machine. Processes that do not depend on each other run at once, so
 * a test waits for at most two rounds of them (the slowest, 5-11 s when measured); each test
 * gets 90 s, as cli-production-seed.test.ts's do, for a machine loaded far past that.
 */
const PROCESSES_TIMEOUT_MS = 90_000;

function cli(...args: string[]) {
  return run(process.execPath, ['bin/fromagerie.js', ...args], { env, timeout: 60_000 });
}

/** `npm start`'s server on a free port, resolved once it says it serves (or after 45 s), with all it printed. */
async function startServer(extra: NodeJS.ProcessEnv = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, PORT: String(port), ...extra } });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const deadline = Date.now() + 45_000;
  // The banner's last line (the generated password, when there is one, follows in the same tick).
  while (!output.includes('  Metrics:') && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return { child, port, output: () => output };
}

describe('npm start (src/server.ts)', () => {
  it('migrates, seeds, prints the docs and the generated admin password once, serves, and stops on SIGTERM', async () => {
    const { child, port, output } = await startServer();
    try {
      expect(output()).toContain(`http://127.0.0.1:${port}/docs`);
      // The password on a line of its own, which no log line shares; the banner points to it.
      expect(output()).toMatch(/created the admin account "admin"\. Its password \(shown only this once\):\n\n {4}\S{20,}\n/);
      expect(output()).toContain('(sign in as "admin" with the password below)');
      expect(output()).toMatch(/^ {2}Metrics: {11}off \(METRICS_PORT=0\)$/m);

      const health = await fetch(`http://127.0.0.1:${port}/v2/health`);
      expect(health.status).toBe(200);
      const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
      expect(output()).not.toMatch(/Error|at .*\.ts:\d+/);
    } finally {
      child.kill('SIGKILL');
    }
  }, PROCESSES_TIMEOUT_MS);

  it('says in the banner that the metrics port is taken, and serves on', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    const { child, port, output } = await startServer({ METRICS_PORT: String(taken), METRICS_HOST: '127.0.0.1' });
    try {
      expect(output()).toContain(`  Metrics:           NOT SERVED: could not listen on 127.0.0.1:${taken} (EADDRINUSE): serving without /metrics; set METRICS_PORT to a free port, or 0`);
      expect((await fetch(`http://127.0.0.1:${port}/v2/health`)).status).toBe(200);
    } finally {
      child.kill('SIGKILL');
      holder.close();
    }
  }, PROCESSES_TIMEOUT_MS);

  it('does not print the password again on the next start; the CLI creates a working key', async () => {
    // The CLI creates the key on the database while the server starts on it: the server reads keys from the database.
    const [created, { child, port, output }] = await Promise.all([cli('api-keys', 'create', '--user', 'admin', '--scopes', 'read:cheeses write:cheeses', '--name', 'pos'), startServer()]);
    try {
      const key = created.stdout.trim().split('\n').at(-1)!;
      expect(key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
      expect(output()).toContain('Interactive docs');
      expect(output()).not.toContain('password');
      const [res, listed] = await Promise.all([fetch(`http://127.0.0.1:${port}/v2/cheeses?limit=1`, { headers: { 'x-api-key': key } }), cli('api-keys', 'list', '--user', 'admin')]);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { total: number }).total).toBeGreaterThanOrEqual(200);
      expect(listed.stdout).toContain(key.slice(0, 16));
      expect(listed.stdout).not.toContain(key);
    } finally {
      child.kill('SIGTERM');
    }
  }, PROCESSES_TIMEOUT_MS);

  it('the CLI refuses unknown users and scopes with a message and exit code 1', async () => {
    // Two processes at once: half the wall time where a core is free.
    await Promise.all([
      expect(cli('api-keys', 'create', '--user', 'nobody', '--scopes', 'admin')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('no account named') }),
      expect(cli('api-keys', 'create', '--user', 'admin', '--scopes', 'root')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('--scopes') }),
    ]);
  }, PROCESSES_TIMEOUT_MS);
});

describe('configuration', () => {
  it('refuses to start in production without ADMIN_PASSWORD or APP_SECRET', () => {
    expect(() => loadConfig({ CHEESE_ENV: 'production', APP_SECRET: 'x'.repeat(32) })).toThrow(/ADMIN_PASSWORD/);
    expect(() => loadConfig({ CHEESE_ENV: 'production', ADMIN_PASSWORD: 'long-enough-password' })).toThrow(/APP_SECRET/);
  });

  it('names every invalid variable', () => {
    try {
      loadConfig({ PORT: 'eighty', CHEESE_ENV: 'staging', DATA_DIR: storage.dataDir });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/PORT/);
      expect((error as Error).message).toMatch(/CHEESE_ENV/);
    }
  });

  it('uses the documented defaults', () => {
    const config = loadConfig({ DATA_DIR: storage.dataDir });
    expect(config).toMatchObject({ env: 'development', port: 8080, host: '127.0.0.1', adminUsername: 'admin', lowStockThresholdKg: 5, publicUrl: 'http://127.0.0.1:8080' });
    expect(config.appSecret.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({ DATA_DIR: storage.dataDir }).appSecret).toBe(config.appSecret);
  });
});
