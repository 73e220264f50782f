import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { runServer, sandboxCustomerKey, type RunningServer } from '../helpers/server.js';

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

/** A server for `work`, then killed with SIGKILL: a crash, nothing released on the way out. */
async function withServer<T>(work: (server: RunningServer) => Promise<T>): Promise<T> {
  const server = await runServer(env);
  try {
    return await work(server);
  } finally {
    await server.stop('SIGKILL');
  }
}

describe(`a restart and the Idempotency-Keys a crash left running (${DIALECT})`, () => {
  it(DIALECT === 'sqlite' ? 'frees them at once on SQLite: the retry is served, not 409' : 'leaves them to their lease on PostgreSQL: 409 "still being processed"', async () => {
    const order = { items: [{ cheeseId: 1, quantity_kg: 0.1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } };
    const { headers, firstId } = await withServer(async ({ http }) => {
      const auth = await sandboxCustomerKey(http, ['read:orders', 'write:orders']);
      const first = await http.post('/v2/orders', { headers: { ...auth, 'idempotency-key': 'cut-off' }, json: order });
      expect(first.status, first.text).toBe(201);
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

    await withServer(async ({ http }) => {
      const retry = await http.post('/v2/orders', { headers: { ...headers, 'idempotency-key': 'cut-off' }, json: order });
      if (DIALECT === 'sqlite') {
        expect(retry.status, retry.text).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBeNull();
        expect(retry.body.id).not.toBe(firstId);
        // Its answer is now the key's: the next retry replays it.
        const again = await http.post('/v2/orders', { headers: { ...headers, 'idempotency-key': 'cut-off' }, json: order });
        expect([again.status, again.headers.get('idempotent-replayed'), again.body.id]).toEqual([201, 'true', retry.body.id]);
      } else {
        expect([retry.status, retry.headers.get('retry-after')], retry.text).toEqual([409, '1']);
        expect(retry.body).toMatchObject({ code: 409, message: expect.stringMatching(/still being processed/) });
      }
    });
  }, 120_000);
});
