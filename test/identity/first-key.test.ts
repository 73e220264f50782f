import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';

/**
 * README's "Your first API key", run literally in bash, as often as a newcomer might: the
 * fourth time the account is at its limit of 3 keys, and that must stop the walk-through
 * loudly instead of leaving KEY empty for every later call to 401.
 */
const run = promisify(execFile);
let storage: TestStorage;
let env: NodeJS.ProcessEnv;

/** The first `sh` block after a README heading, and the first line of the walk-through that uses KEY. */
function readme() {
  const text = fs.readFileSync('README.md', 'utf8');
  const blockAfter = (heading: string) => {
    const start = text.indexOf(`\n${heading}\n`);
    const match = /```sh\n([\s\S]*?)```/.exec(text.slice(start));
    if (start < 0 || !match) throw new Error(`README.md has no sh block under "${heading}"`);
    return match[1]!;
  };
  const walkThrough = blockAfter('## A walk through with curl');
  return {
    createKey: blockAfter('### Your first API key').trim(),
    base: walkThrough.split('\n').find((line) => line.startsWith('B='))!,
    firstCall: walkThrough.split('\n').find((line) => line.startsWith('curl') && line.includes('KEY'))!,
  };
}

const bash = (script: string) =>
  run('bash', ['-c', script], { env, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

beforeAll(async () => {
  storage = await createTestStorage();
  env = processEnvFor(storage, { ADMIN_PASSWORD: 'first-key-test-password' });
  await run(process.execPath, ['bin/fromagerie.js', 'db:seed'], { env, timeout: 60_000 });
});
afterAll(() => storage.dispose());

describe("README's first API key", () => {
  it('prints KEY=sk_test_… the first time', async () => {
    const { createKey } = readme();
    const first = await bash(createKey);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(/^KEY=sk_test_[A-Za-z0-9_-]{43}\n$/);
  }, 60_000);

  it('at the 3-key limit: exit 1, nothing on stdout, why and what to do on stderr, and the walk-through stops', async () => {
    for (let i = 0; i < 2; i++) await run(process.execPath, ['bin/fromagerie.js', 'api-keys', 'create', '--user', 'admin', '--scopes', 'read:cheeses', '--quiet'], { env });
    const { createKey, base, firstCall } = readme();

    const fourth = await bash(createKey);
    expect(fourth.code).toBe(1);
    expect(fourth.stdout).toBe('');
    expect(fourth.stderr).toContain('at most 3 active keys');
    expect(fourth.stderr).toContain('npm run cli -- api-keys list --user admin');
    expect(fourth.stderr).toContain('npm run cli -- api-keys revoke --user admin --id');

    // Carrying on regardless: the next command refuses to send an empty key rather than collecting a 401.
    const carriedOn = await bash(`${createKey}\n${base}\n${firstCall}\necho "still running"`);
    expect(carriedOn.stderr).toMatch(/KEY: create a key first/);
    expect(carriedOn.stdout).not.toContain('still running');
  }, 120_000);
});
