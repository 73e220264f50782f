import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/oauth.js';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';

/**
 * The production build: `npm run build` into a directory of its own (beside dist/, as the
 * compiled code reaches ../package.json and ../seed), then `node <outDir>/server.js` without
 * tsx, serving the API, the dashboard's templates and the docs, and stopping on SIGTERM.
 *
 * tsc alone took 22 s, the whole build 35 s, on this 2-core machine at load 7-10 (other
 * suites running): the build gets 240 s, the server 60 s to start.
 */
const run = promisify(execFile);
const BUILD_TIMEOUT_MS = 240_000;
const ROOT = path.resolve(import.meta.dirname, '../..');
const OUT_DIR = path.join(ROOT, `.build-test-${process.pid}`);

let storage: TestStorage;
let child: ChildProcess | undefined;
let output = '';
let port = 0;


beforeAll(async () => {
  storage = await createTestStorage();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  await run(npm, ['run', '-s', 'build', '--', '--out-dir', path.basename(OUT_DIR)], { cwd: ROOT, timeout: BUILD_TIMEOUT_MS });
  port = await freePort();
  child = spawn(process.execPath, [path.join(OUT_DIR, 'server.js')], { cwd: ROOT, env: processEnvFor(storage, { PORT: String(port) }) });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Interactive docs') && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}, BUILD_TIMEOUT_MS + 70_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  rmSync(OUT_DIR, { recursive: true, force: true });
  await storage?.dispose();
});

describe('npm run build and node <outDir>/server.js', () => {
  it('emits the server, the CLI and the files read at run time, and no tests', () => {
    for (const file of ['server.js', 'cli/main.js', 'build.json', 'modules/dashboard/views/login.eta', 'modules/dashboard/assets/dashboard.css', 'modules/oauth/assets/oauth.css']) {
      expect(existsSync(path.join(OUT_DIR, file)), file).toBe(true);
    }
    expect(existsSync(path.join(OUT_DIR, 'test'))).toBe(false);
  });

  it('serves /v2/health, the dashboard sign-in page and the docs without tsx, and exits 0 on SIGTERM', async () => {
    expect(output, output).toContain('Interactive docs');
    const health = await fetch(`http://127.0.0.1:${port}/v2/health`);
    expect(health.status).toBe(200);

    const login = await fetch(`http://127.0.0.1:${port}/dashboard/login`);
    expect(login.status).toBe(200);
    expect(login.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await login.text()).toMatch(/<form[\s\S]*password/i);

    const docs = await fetch(`http://127.0.0.1:${port}/docs`);
    expect(docs.status).toBe(200);

    const exit = new Promise<number | null>((resolve) => child!.on('exit', resolve));
    child!.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(output).not.toMatch(/\bError\b|at .*\.ts:\d+/);
  }, 60_000);
});
