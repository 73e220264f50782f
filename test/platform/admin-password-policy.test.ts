import { describe, expect, it } from 'vitest';
import { processEnvFor, useTestDatabase } from '../helpers/database.js';
import { runCli, serverExit } from '../helpers/server.js';

/**
 * ADMIN_PASSWORD creates the first admin: it obeys the rule `admin reset-password` applies (one
 * function), as a one-line start-up error naming the rule; an admin that exists is not judged.
 * The real server and CLI as child processes, on both dialects.
 */
const opened = useTestDatabase();

const admins = async () => (await opened.database.db.selectFrom('accounts').select('username').where('role', '=', 'admin').execute()).length;
const oneLine = (stderr: string) => {
  expect(stderr).not.toContain('    at ');
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0];
};

describe('ADMIN_PASSWORD at first start', () => {
  it.each([
    ['one repeated character', 'aaaaaaaaaaaaaaaa', /ADMIN_PASSWORD must use at least 4 different characters/],
    ['the username in it', 'the Admin of the cheese shop', /ADMIN_PASSWORD must not contain the username \(ADMIN_USERNAME is "admin"\)/],
  ])('%s: the server does not start, in one line naming the rule, and creates no admin', async (_, password, rule) => {
    const refused = await serverExit(processEnvFor(opened.storage, { ADMIN_PASSWORD: password }));
    expect(refused.code).toBe(1);
    expect(oneLine(refused.stderr)).toMatch(rule);
    expect(await admins()).toBe(0);
  }, 60_000);

  it('the CLI refuses the same password for reset-password, by the same rule', async () => {
    const seeded = await runCli(processEnvFor(opened.storage, { ADMIN_PASSWORD: 'a good staff password' }), ['db:seed']);
    expect(seeded.code, seeded.stderr).toBe(0);
    const reset = await runCli(processEnvFor(opened.storage), ['admin', 'reset-password', '--password-stdin'], 'the Admin of the cheese shop\n');
    expect(reset.code).toBe(1);
    expect(oneLine(reset.stderr)).toBe('the password must not contain the username');
  }, 60_000);

  it('once the admin exists, ADMIN_PASSWORD is not used, so not judged: db:seed runs', async () => {
    const again = await runCli(processEnvFor(opened.storage, { ADMIN_PASSWORD: 'aaaaaaaaaaaaaaaa' }), ['db:seed']);
    expect(again.code, again.stderr).toBe(0);
    expect(await admins()).toBe(1);
  }, 60_000);
});
