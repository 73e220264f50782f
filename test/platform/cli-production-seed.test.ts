import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_CUSTOMER } from '../../src/bootstrap.js';
import { openTestDatabase, processEnvFor, useTestDatabase } from '../helpers/database.js';
import { startServer } from '../helpers/server.js';
import { freePort } from '../helpers/oauth.js';

/**
 * The sandbox's test customer has a published password: it must never be seeded into a
 * database a production deployment has used, even when the operator forgets CHEESE_ENV.
 * The real server and the real CLI, as child processes, on a real database of each dialect.
 */
const run = promisify(execFile);
const PRODUCTION = { CHEESE_ENV: 'production', ADMIN_PASSWORD: 'production staff password', APP_SECRET: 'a-production-secret-of-32-characters-or-more' };

const opened = useTestDatabase();

function cli(env: NodeJS.ProcessEnv, ...args: string[]) {
  return run(process.execPath, ['bin/fromagerie.js', ...args], { env, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

const contents = async () => ({
  accounts: (await opened.database.db.selectFrom('accounts').select('username').orderBy('id').execute()).map((a) => a.username),
  cheeses: (await opened.database.db.selectFrom('cheeses').select('id').execute()).length,
  orders: (await opened.database.db.selectFrom('orders').select('id').execute()).length,
});

describe('db:seed on a database a production deployment has used', () => {
  beforeAll(async () => {
    const server = await startServer(processEnvFor(opened.storage, PRODUCTION), await freePort());
    const exit = new Promise((resolve) => server.on('exit', resolve));
    server.kill('SIGTERM');
    await exit;
  }, 90_000);

  it('without CHEESE_ENV=production: exit 1, says why and what to do, and seeds nothing', async () => {
    const before = await contents();
    expect(before.accounts).toEqual(['admin']);
    const seeded = await cli(processEnvFor(opened.storage), 'db:seed');
    expect(seeded.code).toBe(1);
    expect(seeded.stdout).toBe('');
    expect(seeded.stderr).toMatch(/^refusing to seed: a production deployment has used this database since \d{4}-\d\d-\d\dT.*CHEESE_ENV=development.*Set CHEESE_ENV=production/s);
    expect(seeded.stderr).not.toMatch(/at .*\.ts:\d+/);
    expect(await contents()).toEqual(before);
    expect(before.accounts).not.toContain(TEST_CUSTOMER.username);
  }, 60_000);

  it('nor does a server started outside production seed it: it stops with the same message', async () => {
    const before = await contents();
    const started = await run(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...processEnvFor(opened.storage, { CHEESE_ENV: 'sandbox' }), PORT: String(await freePort()) }, timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(started.code).toBe(1);
    expect(started.stderr).toContain('refusing to seed: a production deployment has used this database');
    expect(started.stderr).toContain('CHEESE_ENV=sandbox');
    expect(await contents()).toEqual(before);
  }, 60_000);

  it('with CHEESE_ENV=production it runs as production does: no sample account', async () => {
    const seeded = await cli(processEnvFor(opened.storage, PRODUCTION), 'db:seed');
    expect(seeded.code).toBe(0);
    expect(seeded.stdout).toContain('catalogue not empty; nothing seeded');
    expect((await contents()).accounts).toEqual(['admin']);
  }, 60_000);
});

describe('db:seed on a database production has never used', () => {
  it('still seeds the sandbox outside production', async () => {
    const fresh = await openTestDatabase();
    try {
      const seeded = await cli(processEnvFor(fresh.storage, { ADMIN_PASSWORD: 'a development staff password' }), 'db:seed');
      expect(seeded.code, seeded.stderr).toBe(0);
      const accounts = (await fresh.database.db.selectFrom('accounts').select('username').execute()).map((a) => a.username);
      expect(accounts).toContain(TEST_CUSTOMER.username);
    } finally {
      await fresh.dispose();
    }
  }, 60_000);
});
