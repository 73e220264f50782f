import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';

export const POSTGRES_URL = process.env.TEST_DATABASE_URL;
export const DIALECT = POSTGRES_URL ? 'postgres' : 'sqlite';

export interface TestStorage {
  dataDir: string;
  databaseUrl: string | undefined;
  databaseSchema: string | undefined;
  dispose(): Promise<void>;
}

/**
 * A fresh place for one test file's data: a temporary directory (the SQLite file and
 * images), and with TEST_DATABASE_URL a new PostgreSQL schema, dropped when the whole run
 * ends (global-setup.ts).
 */
export async function createTestStorage(): Promise<TestStorage> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-test-'));
  if (!POSTGRES_URL) {
    return { dataDir, databaseUrl: undefined, databaseSchema: undefined, dispose: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  }
  const schema = `test_${process.env.FROMAGERIE_TEST_RUN ?? 'adhoc'}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  return {
    dataDir,
    databaseUrl: POSTGRES_URL,
    databaseSchema: schema,
    dispose: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  };
}

/**
 * The environment the server and the operator CLI run with over this storage, as a user's
 * shell would give it: the caller's environment with the data directory and database set,
 * quiet logs, and neither CHEESE_ENV nor ADMIN_PASSWORD unless `extra` sets them.
 */
export function processEnvFor(storage: Pick<TestStorage, 'dataDir' | 'databaseUrl' | 'databaseSchema'>, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: storage.dataDir,
    LOG_LEVEL: 'warn',
    // Test servers run side by side: none takes the fixed metrics port (a test that wants it sets one).
    METRICS_PORT: '0',
    ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl, DATABASE_SCHEMA: storage.databaseSchema } : {}),
  };
  delete env.ADMIN_PASSWORD;
  delete env.CHEESE_ENV;
  return { ...env, ...extra };
}

/** A database opened over fresh storage, for tests that drive the database or the CLI without an app. */
export async function openTestDatabase(): Promise<{ storage: TestStorage; database: Database; dispose(): Promise<void> }> {
  const storage = await createTestStorage();
  const database = openDatabase({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, databaseSchema: storage.databaseSchema, poolSize: 2 });
  return {
    storage,
    database,
    async dispose() {
      await database.close();
      await storage.dispose();
    },
  };
}

/** openTestDatabase for the whole file: opened before its tests, disposed of after them. Read its fields inside tests. */
export function useTestDatabase(): { storage: TestStorage; database: Database } {
  const opened = {} as { storage: TestStorage; database: Database; dispose(): Promise<void> };
  beforeAll(async () => {
    Object.assign(opened, await openTestDatabase());
  });
  afterAll(() => opened.dispose?.());
  return opened;
}
