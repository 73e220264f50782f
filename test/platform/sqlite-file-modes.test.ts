import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { runServer, sandboxCustomerKey } from '../helpers/server.js';

/**
 * The SQLite database and its -wal and -shm files hold password hashes and personal data: 0600
 * under the usual umask 022, whether the server creates them or finds them wider (an earlier
 * version's). PostgreSQL keeps no such file here.
 */
let storage: TestStorage;
let umask: number;
beforeAll(async () => {
  storage = await createTestStorage();
  // The server inherits it, as from a shell.
  umask = process.umask(0o022);
});
afterAll(async () => {
  process.umask(umask);
  await storage.dispose();
});

const FILES = ['fromagerie.sqlite', 'fromagerie.sqlite-wal', 'fromagerie.sqlite-shm'];
const modes = () => Object.fromEntries(FILES.map((name) => [name, (fs.statSync(path.join(storage.dataDir, name)).mode & 0o777).toString(8)]));
const OWNER_ONLY = Object.fromEntries(FILES.map((name) => [name, '600']));

/** A server start, then writes: a customer signs up and places an order. */
async function startAndWrite(): Promise<Record<string, string>> {
  const server = await runServer(processEnvFor(storage, { ADMIN_PASSWORD: 'a good staff password' }));
  try {
    const auth = await sandboxCustomerKey(server.http, ['read:orders', 'write:orders']);
    const placed = await server.http.post('/v2/orders', { headers: auth, json: { items: [{ cheeseId: 1, quantity_kg: 0.1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } } });
    expect(placed.status, placed.text).toBe(201);
    // Checked while the server runs: -wal and -shm exist until it closes the database.
    return modes();
  } finally {
    expect(await server.stop()).toBe(0);
  }
}

describe.skipIf(DIALECT !== 'sqlite')('SQLite files are the owner\'s alone', () => {
  it('created 0600 by a first start, after writes', async () => {
    expect(await startAndWrite()).toEqual(OWNER_ONLY);
  }, 90_000);

  it('tightened to 0600 when found wider', async () => {
    const database = path.join(storage.dataDir, 'fromagerie.sqlite');
    fs.chmodSync(database, 0o644);
    for (const journal of ['-wal', '-shm']) if (fs.existsSync(database + journal)) fs.chmodSync(database + journal, 0o644);
    expect(await startAndWrite()).toEqual(OWNER_ONLY);
    expect((fs.statSync(path.join(storage.dataDir, '.app-secret')).mode & 0o777).toString(8)).toBe('600');
  }, 90_000);
});
