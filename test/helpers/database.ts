import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

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
