import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
let t: TestApp;
let work: string;

beforeAll(async () => {
  t = await createTestApp({ seed: true });
  work = await mkdtemp(path.join(tmpdir(), 'fromagerie-sdk-pack-'));
});
afterAll(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

const consumer = `
import { Fromagerie, FromagerieError } from '@fromagerie/sdk';
const sdk = new Fromagerie({ apiKey: process.env.KEY, baseUrl: process.env.BASE });
const page = await sdk.cheeses.list({ limit: 3 });
const missing = await sdk.cheeses.get('no-such-cheese').catch((error) => error);
console.log(JSON.stringify({ names: page.items.map((c) => c.name), hasMore: page.hasMore, error: missing instanceof FromagerieError ? missing.type : String(missing) }));
`;

it('npm pack of the SDK installs in an empty project outside the repository and lists cheeses', async () => {
  // prepack builds dist; the tarball holds the build, its types and the README, no sources or tests.
  const packed = await run('npm', ['pack', '-w', '@fromagerie/sdk', '--pack-destination', work, '--json', '--silent'], { timeout: 120_000 });
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  const files = info.files.map((f) => f.path);
  expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/openapi.d.ts']));
  expect(files.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && f !== 'README.md')).toEqual([]);

  const project = path.join(work, 'app');
  await run('mkdir', [project]);
  await run('npm', ['init', '-y'], { cwd: project, timeout: 30_000 });
  await run('npm', ['install', path.join(work, info.filename), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, timeout: 120_000 });
  const installed = JSON.parse(await readFile(path.join(project, 'node_modules/@fromagerie/sdk/package.json'), 'utf8'));
  expect(Object.keys(installed.dependencies).sort()).toEqual(['openapi-fetch', 'standardwebhooks']);
  await writeFile(path.join(project, 'main.mjs'), consumer);

  const key = await t.key(['read:cheeses'], 'customer');
  const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project, env: { PATH: process.env.PATH, KEY: key, BASE: `${t.http.baseUrl}/v2` }, timeout: 30_000 });
  expect(JSON.parse(stdout)).toEqual({ names: [expect.any(String), expect.any(String), expect.any(String)], hasMore: true, error: 'not_found' });
}, 300_000);
