import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/db/migrate.js';
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

function cli(args: string[], extra: NodeJS.ProcessEnv = {}) {
  return run(process.execPath, ['bin/fromagerie.js', ...args], { env: { ...env, ...extra }, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

/** The server on a free port until it prints `until` (or exits); its exit code and output. */
async function startServer(extra: NodeJS.ProcessEnv, until: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, ...extra, PORT: String(port) } });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + 45_000;
  while (!output.includes(until) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return { child, port, exited, output: () => output };
}

const TIMEOUT_MS = 120_000;

describe('migrate, MIGRATE_ON_BOOT and healthcheck', () => {
  it('MIGRATE_ON_BOOT=false refuses a schema behind; `migrate` applies and prints; then the server starts and `healthcheck` follows readiness', async () => {
    const refused = await startServer({ MIGRATE_ON_BOOT: 'false' }, 'Interactive docs');
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toMatch(/schema is behind.*MIGRATE_ON_BOOT=false.*fromagerie migrate/s);

    const first = await cli(['migrate']);
    expect(first.code).toBe(0);
    for (const name of Object.keys(migrations)) expect(first.stdout).toContain(`applied ${name}`);
    const again = await cli(['migrate']);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining('already up to date') });

    const server = await startServer({ MIGRATE_ON_BOOT: 'false' }, 'Interactive docs');
    try {
      expect(server.output()).toContain('Interactive docs');
      const ok = await cli(['healthcheck'], { PORT: String(server.port), PUBLIC_URL: '' });
      expect(ok).toMatchObject({ code: 0, stdout: expect.stringContaining('answered 200') });
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
    }
    // Nothing listens any more: not ready, exit 1.
    const down = await cli(['healthcheck'], { PORT: String(server.port), PUBLIC_URL: '' });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/not ready/);
  }, TIMEOUT_MS);

  it('healthcheck opens no database and asks this instance (HOST and PORT), never PUBLIC_URL; --help needs no database', async () => {
    // A DATABASE_URL nothing answers at would make any database use fail or hang.
    const broken = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', DATA_DIR: '/nonexistent/dir' };
    const answer = await cli(['healthcheck'], { ...broken, HOST: '0.0.0.0', PORT: '1', PUBLIC_URL: 'http://proxy.example:8080' });
    expect(answer.code).toBe(1);
    expect(answer.stderr).toContain('http://127.0.0.1:1/v2/health/ready');
    expect(answer.stderr).not.toMatch(/ECONNREFUSED 127\.0\.0\.1:1\b.*postgres|database/i);
    const help = await cli(['migrate', '--help'], broken);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('apply pending migrations') });
  }, TIMEOUT_MS);

  it('ROLE=worker serves the probes only', async () => {
    const worker = await startServer({ ROLE: 'worker' }, 'Probes:');
    try {
      expect(worker.output(), 'the worker did not start').toContain('Probes:');
      const base = `http://127.0.0.1:${worker.port}/v2`;
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);
      expect((await fetch(`${base}/cheeses`)).status).toBe(404);
      expect((await fetch(`${base}/health`)).status).toBe(404);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
    }
  }, TIMEOUT_MS);
});
