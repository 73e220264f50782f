import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_CUSTOMER } from '../../src/bootstrap.js';
import { processEnvFor, useTestDatabase } from '../helpers/database.js';
import { runCli, runServer, serverExit } from '../helpers/server.js';

/**
 * A store first used in development (a copied DATA_DIR, the same PostgreSQL database) holds the
 * sandbox's fixtures: the test customer, whose password the README publishes, and its orders.
 * A production start there refuses until `fixtures remove` has removed exactly them; the admin
 * and every other customer stay. The real server and CLI as child processes, on both dialects.
 */
const ADMIN = { username: 'admin', password: 'a development staff password' };
const PRODUCTION = { CHEESE_ENV: 'production', ADMIN_PASSWORD: 'another production password', APP_SECRET: 'a-production-secret-of-32-characters-or-more' };
const OTHER = { username: 'real.customer', email: 'real.customer@example.net', password: 'Comte aged thirty months' };

const opened = useTestDatabase();

const usernames = async () => (await opened.database.db.selectFrom('accounts').select('username').orderBy('username').execute()).map((a) => a.username);
const orderOwners = async () => (await opened.database.db.selectFrom('orders').select('account_id').execute()).map((o) => o.account_id);
const marked = async () => (await opened.database.db.selectFrom('deployment').select('key').execute()).length > 0;

describe('development fixtures never serve production', () => {
  beforeAll(async () => {
    // Development: seeds the sandbox; a real customer signs up and orders beside it.
    const dev = await runServer(processEnvFor(opened.storage, { ADMIN_PASSWORD: ADMIN.password }));
    try {
      expect((await dev.http.post('/v2/customer', { json: OTHER })).status).toBe(201);
      const login = await dev.http.post<{ token: string }>('/v2/customer/login', { json: { username: OTHER.username, password: OTHER.password } });
      const order = await dev.http.post('/v2/orders', {
        headers: { authorization: `Bearer ${login.body.token}` },
        json: { items: [{ cheeseId: 1, quantity_kg: 0.5 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } },
      });
      expect(order.status, order.text).toBe(201);
    } finally {
      await dev.stop();
    }
  }, 120_000);

  it('a production start refuses in one line naming the fixtures and the command; nothing is marked', async () => {
    const refused = await serverExit(processEnvFor(opened.storage, PRODUCTION));
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^refusing to start with CHEESE_ENV=production: .*"test\.customer".*10 sandbox order\(s\).*fromagerie fixtures remove.*npm run cli -- fixtures remove/);
    expect(refused.stderr).not.toContain('    at ');
    expect(await marked()).toBe(false);
  }, 90_000);

  it('`fixtures remove` removes exactly the fixtures, says what, and finds nothing the second time', async () => {
    const env = processEnvFor(opened.storage, PRODUCTION);
    const removed = await runCli(env, ['fixtures', 'remove']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/^removed the sandbox test customer "test\.customer".* and 10 sandbox order\(s\) \(id 1, 2, 3, 4, 5, 6, 7, 8, 9, 10\)\n$/);
    expect(await usernames()).toEqual(['admin', OTHER.username]);
    const owners = await orderOwners();
    expect(owners).toHaveLength(1);
    expect(owners[0]).not.toBeNull();
    const again = await runCli(env, ['fixtures', 'remove']);
    expect(again).toMatchObject({ code: 0, stdout: 'no development fixtures found: nothing removed\n' });
  }, 90_000);

  it('then production starts: the published password signs in no more; the admin and the real customer do', async () => {
    const server = await runServer(processEnvFor(opened.storage, PRODUCTION));
    try {
      const published = await server.http.post('/v2/customer/login', { json: { username: TEST_CUSTOMER.username, password: TEST_CUSTOMER.password } });
      expect(published.status).toBe(401);
      expect((await server.http.post('/v2/customer/login', { json: ADMIN })).status).toBe(200);
      expect((await server.http.post('/v2/customer/login', { json: { username: OTHER.username, password: OTHER.password } })).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(await marked()).toBe(true);
    // The reverse still holds: a development start on it now refuses to seed.
    const dev = await serverExit(processEnvFor(opened.storage));
    expect(dev.code).toBe(1);
    expect(dev.stderr).toContain('refusing to seed: a production deployment has used this database');
  }, 120_000);
});
