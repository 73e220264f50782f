import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { runCli, runServer, type ProcessOutcome, type RunningServer } from '../helpers/server.js';

/**
 * Every CLI write works beside a running server that is writing (SQLite: its transactions take
 * the write lock before they read, BEGIN IMMEDIATE, so another process's commit cannot void
 * their snapshot), and a CLI failure is one line on stderr, never a stack.
 */
let storage: TestStorage;
let env: NodeJS.ProcessEnv;
let server: RunningServer;
beforeAll(async () => {
  storage = await createTestStorage();
  env = processEnvFor(storage, { ADMIN_PASSWORD: 'a good staff password', RATE_LIMITS: 'off', MAX_CONNECTIONS_PER_CLIENT: '0' });
  server = await runServer(env);
}, 90_000);
afterAll(async () => {
  await server?.stop();
  await storage.dispose();
});

const order = (n: number) => ({ items: [{ cheeseId: 1 + (n % 10), quantity_kg: 0.1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } });

/** Orders placed back to back, four at a time, until `stop`: the server writing all along. Resolves with the statuses seen. */
async function writeLoad(auth: Record<string, string>, stop: { done: boolean }): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let n = 0;
  const lane = async () => {
    while (!stop.done) {
      const { status } = await server.http.post('/v2/orders', { headers: auth, json: order(n++) });
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  return statuses;
}

const ok = (outcome: ProcessOutcome, what: string) => {
  expect(outcome.stderr, what).toBe('');
  expect(outcome.code, what).toBe(0);
  return outcome.stdout;
};

describe(`CLI writes beside a running server under write load (${DIALECT})`, () => {
  it('reset-password, api-keys, oauth-clients, fixtures remove and db:seed all exit 0, round after round', async () => {
    // A customer of its own places the orders: `fixtures remove` takes the sandbox's away meanwhile.
    const signUp = await server.http.post('/v2/customer', { json: { username: 'load.customer', email: 'load@example.net', password: 'Comte aged thirty months' } });
    expect(signUp.status, signUp.text).toBe(201);
    const login = await server.http.post<{ token: string }>('/v2/customer/login', { json: { username: 'load.customer', password: 'Comte aged thirty months' } });
    const auth = { authorization: `Bearer ${login.body.token}` };
    const stop = { done: false };
    const load = writeLoad(auth, stop);
    try {
      for (let round = 0; round < 2; round++) {
        ok(await runCli(env, ['admin', 'reset-password', '--quiet']), `reset-password, round ${round}`);
        ok(await runCli(env, ['api-keys', 'create', '--user', 'admin', '--scopes', 'admin', '--quiet']), `api-keys create, round ${round}`);
        const id = ok(await runCli(env, ['api-keys', 'list', '--user', 'admin']), 'api-keys list').trim().split('\n').at(-1)!.split('\t')[0]!;
        ok(await runCli(env, ['api-keys', 'revoke', '--user', 'admin', '--id', id]), `api-keys revoke, round ${round}`);
        const client = ok(await runCli(env, ['oauth-clients', 'create', '--name', `app ${round}`, '--type', 'public', '--grants', 'authorization_code', '--scopes', 'read:orders', '--redirect-uri', 'https://app.example/cb']), `oauth-clients create, round ${round}`);
        const clientId = /OAuth client (\d+)/.exec(client)![1]!;
        ok(await runCli(env, ['oauth-clients', 'delete', '--id', clientId]), `oauth-clients delete, round ${round}`);
        ok(await runCli(env, ['fixtures', 'remove']), `fixtures remove, round ${round}`);
        ok(await runCli(env, ['db:seed']), `db:seed, round ${round}`);
      }
    } finally {
      stop.done = true;
    }
    // Placed (a cheese sold out meanwhile is a 409): never a 5xx, and many while the CLI ran.
    const statuses = await load;
    expect([...statuses.keys()].filter((status) => status !== 201 && status !== 409)).toEqual([]);
    expect(statuses.get(201)).toBeGreaterThan(20);
  }, 600_000);

  it('a CLI failure is one line on stderr, exit 1, no stack', async () => {
    for (const args of [
      ['admin', 'reset-password', '--user', 'nobody'],
      ['api-keys', 'revoke', '--user', 'nobody', '--id', '1'],
      ['oauth-clients', 'delete', '--id', '999999'],
    ]) {
      const failed = await runCli(env, args);
      expect(failed.code, args.join(' ')).toBe(1);
      expect(failed.stdout).toBe('');
      expect(failed.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(failed.stderr).not.toContain('    at ');
    }
  }, 120_000);
});
