import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrate.js';
import { createTestStorage, DIALECT, POSTGRES_URL, processEnvFor, type TestStorage } from '../helpers/database.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';
import { runCli, runServer, type RunningServer } from '../helpers/server.js';

/**
 * Issue 32 §3: `fromagerie backup --to` while orders are being placed through /v2, then
 * `fromagerie restore --from` into a fresh store (a new DATA_DIR, or a new PostgreSQL database)
 * and a server started on it with the same APP_SECRET: it serves, every order acknowledged
 * before the backup began is there, and the webhook's stored secret (sealed under APP_SECRET)
 * still decrypts: its test event verifies under the secret returned at creation. A restore into
 * a store that holds data is refused and changes nothing.
 * BACKUP_TEST_ORDERS (default 40) orders are placed before the backup: set 10000 to measure a
 * larger store (the figures are printed; docs/operations.md "Backups").
 */
const APP_SECRET = 'the-app-secret-the-backup-and-its-restore-share-01';
const BEFORE = Number(process.env.BACKUP_TEST_ORDERS ?? 40);
const address = { line1: '3 rue du Lait', city: 'Poligny', country: 'FR' };

let storage: TestStorage;
let receiver: Receiver;
const servers: RunningServer[] = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-backup-'));
/** The fresh PostgreSQL databases restored into, dropped afterwards. */
const restoreDatabases: string[] = [];

const envOf = (store: Pick<TestStorage, 'dataDir' | 'databaseUrl' | 'databaseSchema'>) =>
  processEnvFor(store, { APP_SECRET, ADMIN_PASSWORD: 'a backup test staff password', RATE_LIMITS: 'off', MAX_CONNECTIONS_PER_CLIENT: '0', PUBLIC_URL: 'http://localhost:8080' });

async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  storage = await createTestStorage();
  receiver = await new Receiver().start();
});
afterAll(async () => {
  for (const server of servers) await server.stop();
  await receiver?.close();
  await storage?.dispose();
  for (const name of restoreDatabases) await onServer(POSTGRES_URL!, (c) => c.query(`drop database if exists ${name} with (force)`));
  fs.rmSync(work, { recursive: true, force: true });
});

/** A fresh store: a new DATA_DIR, and on PostgreSQL a new database with the same schema name (pg_restore cannot rename a schema). */
async function freshStore(of: TestStorage): Promise<Pick<TestStorage, 'dataDir' | 'databaseUrl' | 'databaseSchema'>> {
  const dataDir = fs.mkdtempSync(path.join(work, 'restored-'));
  if (!POSTGRES_URL) return { dataDir, databaseUrl: undefined, databaseSchema: undefined };
  const url = new URL(POSTGRES_URL);
  const name = `${url.pathname.slice(1)}_restore_${randomBytes(4).toString('hex')}`;
  restoreDatabases.push(name);
  await onServer(POSTGRES_URL, (c) => c.query(`create database ${name}`));
  url.pathname = `/${name}`;
  return { dataDir, databaseUrl: url.toString(), databaseSchema: of.databaseSchema };
}

/** What a refused restore must leave as it was: the SQLite file's bytes and DATA_DIR's names, or the schema's relations and orders. */
async function fingerprint(store: Pick<TestStorage, 'dataDir' | 'databaseUrl' | 'databaseSchema'>): Promise<string> {
  const names = fs.readdirSync(store.dataDir).sort().join(',');
  if (!store.databaseUrl) return `${names} ${createHash('sha256').update(fs.readFileSync(path.join(store.dataDir, 'fromagerie.sqlite'))).digest('hex')}`;
  const counts = await onServer(store.databaseUrl, async (c) => {
    const relations = await c.query(`select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1`, [store.databaseSchema]);
    const orders = await c.query(`select count(*)::int as n, coalesce(max(id), 0)::int as last from ${store.databaseSchema}.orders`);
    return `${relations.rows[0].n} ${orders.rows[0].n} ${orders.rows[0].last}`;
  });
  return `${names} ${counts}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

describe(`backup while orders are placed, restore into a fresh store (${DIALECT})`, () => {
  it('restores every order acknowledged before the backup began, and the webhook secrets still decrypt', async () => {
    const env = envOf(storage);
    const source = await runServer(env);
    servers.push(source);
    const key = (await runCli(env, ['api-keys', 'create', '--user', 'admin', '--scopes', 'admin', '--quiet'])).stdout.trim();
    const auth = bearer(key);
    const cheese = await source.http.post<{ id: number }>('/v2/cheeses', { headers: auth, json: { name: 'Backed-up Beaufort', pricePerKg: 30, stockQuantityKg: 100_000 } });
    expect(cheese.status, cheese.text).toBe(201);
    const webhook = await source.http.post<{ id: number; secret: string }>('/v2/webhooks', { headers: auth, json: { url: receiver.url('/hook'), events: ['order.cancelled'] } });
    expect(webhook.status, webhook.text).toBe(201);

    // Orders through /v2 from four loops, each 201 stamped with when it arrived.
    const acknowledged: { id: number; at: number }[] = [];
    let placing = true;
    const place = async () => {
      while (placing) {
        const placed = await source.http.post<{ id: number }>('/v2/orders', { headers: auth, json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 0.1 }], shipping: { method: 'standard', address } } });
        if (placed.status === 201) acknowledged.push({ id: placed.body.id, at: performance.now() });
        else throw new Error(`an order was refused: ${placed.status} ${placed.text}`);
      }
    };
    const loops = Array.from({ length: 4 }, place);
    const placedBefore = performance.now();
    await expect.poll(() => acknowledged.length, { timeout: 600_000, interval: 50 }).toBeGreaterThanOrEqual(BEFORE);
    const placingMs = performance.now() - placedBefore;

    const file = path.join(work, DIALECT === 'sqlite' ? 'fromagerie.sqlite.backup' : 'fromagerie.dump');
    const backupBegan = performance.now();
    const backup = await runCli(env, ['backup', '--to', file]);
    const backupEnded = performance.now();
    const duringBackup = acknowledged.filter((o) => o.at > backupBegan && o.at < backupEnded).length;
    // A few more after it, then the loops stop.
    const after = acknowledged.length;
    await expect.poll(() => acknowledged.length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(after + 10);
    placing = false;
    await Promise.all(loops);
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(/^wrote .+: [\d.]+ (kB|MB), .+, in [\d.]+ s$/m);
    expect(backup.stdout).toContain('not included: uploaded images');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(duringBackup, 'orders were acknowledged while the backup ran').toBeGreaterThan(0);
    const beforeBackup = acknowledged.filter((o) => o.at < backupBegan).map((o) => o.id);
    expect(beforeBackup.length).toBeGreaterThanOrEqual(BEFORE);

    // A second backup to the same file is refused, leaving it as it is.
    const again = await runCli(env, ['backup', '--to', file]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('exists: kept unchanged');

    // The source is gone, as in the disaster a restore is for (and its work no longer weighs on the figures).
    expect(await source.stop()).toBe(0);

    // Into a fresh store.
    const target = await freshStore(storage);
    const targetEnv = envOf(target);
    const restoreBegan = performance.now();
    const restored = await runCli(targetEnv, ['restore', '--from', file]);
    const restoreMs = performance.now() - restoreBegan;
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/^restored /);
    if (!target.databaseUrl) expect(fs.statSync(path.join(target.dataDir, 'fromagerie.sqlite')).mode & 0o777).toBe(0o600);

    // Refused into a store that holds data, changing nothing: the restored one, and the running source.
    const unchanged = await fingerprint(target);
    for (const refusedEnv of [targetEnv, env]) {
      const refused = await runCli(refusedEnv, ['restore', '--from', file]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^refused: .*already holds .*Nothing changed\n$/);
    }
    expect(await fingerprint(target)).toBe(unchanged);

    const startBegan = performance.now();
    const restoredServer = await runServer(targetEnv);
    servers.push(restoredServer);
    expect((await restoredServer.http.get('/v2/health/ready')).status).toBe(200);
    const startMs = performance.now() - startBegan;
    for (const id of beforeBackup) {
      const order = await restoredServer.http.get<{ id: number }>(`/v2/orders/${id}`, { headers: auth });
      expect(order.status, `order ${id}, acknowledged before the backup began: ${order.text}`).toBe(200);
    }
    // The webhook's secret, stored sealed under APP_SECRET, opens: its test event is signed with it.
    expect(restoredServer.output()).not.toContain('unreadableWebhookSecrets');
    const tested = await restoredServer.http.post(`/v2/webhooks/${webhook.body.id}/test`, { headers: auth });
    expect(tested.status, tested.text).toBe(200);
    const [delivery] = await receiver.waitFor('/hook', 1, 30_000);
    const payload = new StandardWebhook(webhook.body.secret).verify(delivery!.raw, delivery!.headers as Record<string, string>) as { type: string };
    expect(payload.type).toBe('webhook.test');
    // The restored instance takes new orders.
    const next = await restoredServer.http.post('/v2/orders', { headers: auth, json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 0.1 }], shipping: { method: 'standard', address } } });
    expect(next.status, next.text).toBe(201);

    process.stdout.write(
      `backup-restore (${DIALECT}): ${acknowledged.length} orders placed (${beforeBackup.length} before the backup, ${duringBackup} during it; ${BEFORE} took ${seconds(placingMs)}); ` +
        `backup ${seconds(backupEnded - backupBegan)} as a CLI process (${backup.stdout.split('\n')[0]}); restore ${seconds(restoreMs)} (${restored.stdout.split('\n')[0]}); ` +
        `first start to ready ${seconds(startMs)}\n`,
    );
  }, 900_000);

  it('restores a backup made before the latest migrations: the first start migrates it forward and is ready', async () => {
    const older = await createTestStorage();
    try {
      const database = openDatabase({ dataDir: older.dataDir, databaseUrl: older.databaseUrl, databaseSchema: older.databaseSchema, poolSize: 1 });
      const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations }, ...(older.databaseSchema ? { migrationTableSchema: older.databaseSchema } : {}) });
      expect((await migrator.migrateTo('0022_grant_bound_resources')).error).toBeUndefined();
      await database.close();
      const file = path.join(work, 'older.backup');
      const backup = await runCli(envOf(older), ['backup', '--to', file]);
      expect(backup.stderr).toBe('');
      expect(backup.code).toBe(0);
      const target = await freshStore(older);
      const restored = await runCli(envOf(target), ['restore', '--from', file]);
      expect(restored.stderr).toBe('');
      expect(restored.code).toBe(0);
      const server = await runServer(envOf(target));
      servers.push(server);
      // Ready means the schema is current (readiness answers 503 "schema behind" otherwise).
      const ready = await server.http.get('/v2/health/ready');
      expect(ready.status, ready.text).toBe(200);
      expect((await server.http.get('/v2/health')).status).toBe(200);
    } finally {
      await older.dispose();
    }
  }, 120_000);

  it('says the exact pg_dump command when pg_dump is absent (exit 1, no file left)', async () => {
    const file = path.join(work, 'no-pg-dump.dump');
    const env = { ...envOf(storage), DATABASE_URL: 'postgres://fromagerie@127.0.0.1:1/fromagerie', DATABASE_SCHEMA: 'shop', PATH: path.join(work, 'empty-path') };
    const outcome = await runCli(env, ['backup', '--to', file]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
    expect(outcome.stderr).toContain(`pg_dump --format=custom --no-owner --schema=shop --file=${file} "$DATABASE_URL"`);
    expect(fs.existsSync(file)).toBe(false);
  });
});
