import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { startServer } from '../helpers/server.js';

/**
 * A request cut off by a crash leaves its Idempotency-Key running. On SQLite the one instance
 * owns the file, so its restart frees such keys at once: the client's retry is served by the
 * restarted process, not refused until the dead one's lease runs out. On PostgreSQL a booting
 * instance must not do this (the running keys may be other live instances'): the lease decides.
 */
let storage: TestStorage;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  storage = await createTestStorage();
  // A lease far longer than the test, so only the boot can free the key.
  env = processEnvFor(storage, { RATE_LIMITS: 'off', IDEMPOTENCY_LEASE_MS: '600000' });
});
afterAll(async () => {
  await storage.dispose();
});

async function withServer<T>(work: (base: string) => Promise<T>): Promise<T> {
  const port = await freePort();
  const child: ChildProcess = await startServer(env, port);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    return await work(`http://127.0.0.1:${port}`);
  } finally {
    // kill -9: as a crash, nothing released on the way out.
    child.kill('SIGKILL');
    await exited;
  }
}

async function json(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe(`a restart and the Idempotency-Keys a crash left running (${DIALECT})`, () => {
  it(DIALECT === 'sqlite' ? 'frees them at once on SQLite: the retry is served, not 409' : 'leaves them to their lease on PostgreSQL: 409 "still being processed"', async () => {
    const order = { items: [{ cheeseId: 1, quantity_kg: 0.1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } };
    const { headers, firstId } = await withServer(async (base) => {
      const login = await json(base, '/v2/customer/login', { method: 'POST', body: { username: 'test.customer', password: 'Gruyere and crackers 2026' } });
      expect(login.status).toBe(200);
      const key = await json(base, '/v2/api-keys', { method: 'POST', headers: { authorization: `Bearer ${login.body.token as string}` }, body: { scopes: ['read:orders', 'write:orders'] } });
      expect(key.status).toBe(201);
      const auth = { 'x-api-key': key.body.key as string };
      const first = await json(base, '/v2/orders', { method: 'POST', headers: { ...auth, 'idempotency-key': 'cut-off' }, body: order });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      return { headers: auth, firstId: first.body.id };
    });

    // What a crash mid-request leaves: the key running under a live lease, nothing created
    // (its transaction never committed). Written as the dead process would have left it.
    const database = openDatabase({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, databaseSchema: storage.databaseSchema, poolSize: 1 });
    try {
      const updated = await database.db
        .updateTable('idempotency_keys')
        .set({ state: 'running', created_resource: null, status_code: null, response_headers: null, response_body: null, locked_until: new Date(Date.now() + 3_600_000).toISOString() })
        .where('idempotency_key', '=', 'cut-off')
        .executeTakeFirst();
      expect(Number(updated.numUpdatedRows)).toBe(1);
    } finally {
      await database.close();
    }

    await withServer(async (base) => {
      const retry = await json(base, '/v2/orders', { method: 'POST', headers: { ...headers, 'idempotency-key': 'cut-off' }, body: order });
      if (DIALECT === 'sqlite') {
        expect(retry.status, JSON.stringify(retry.body)).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBeNull();
        expect(retry.body.id).not.toBe(firstId);
        // Its answer is now the key's: the next retry replays it.
        const again = await json(base, '/v2/orders', { method: 'POST', headers: { ...headers, 'idempotency-key': 'cut-off' }, body: order });
        expect([again.status, again.headers.get('idempotent-replayed'), again.body.id]).toEqual([201, 'true', retry.body.id]);
      } else {
        expect([retry.status, retry.headers.get('retry-after')], JSON.stringify(retry.body)).toEqual([409, '1']);
        expect(retry.body).toMatchObject({ code: 409, message: expect.stringMatching(/still being processed/) });
      }
    });
  }, 120_000);
});
