import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';

type Row = Record<string, unknown>;

/**
 * The checker's read of the database after the run, straight from PostgreSQL (not through a
 * fault proxy) or from the SQLite file, in SQL both accept. Values the checker compares are
 * normalized: ids and counts to numbers, timestamps to epoch ms.
 */
export interface FinalRead {
  rows(sql: string): Promise<Row[]>;
  close(): Promise<void>;
}

export async function readPostgres(url: string): Promise<FinalRead> {
  const client = new pg.Client({ connectionString: url, statement_timeout: 10_000, connectionTimeoutMillis: 5_000 });
  // A connection lost meanwhile fails the next query; the 'error' event alone must not crash the run.
  client.on('error', () => undefined);
  await client.connect();
  return {
    rows: async (sql) => (await client.query(sql)).rows as Row[],
    close: () => client.end(),
  };
}

export function readSqlite(dataDir: string): FinalRead {
  const db = new SQLite(path.join(dataDir, 'fromagerie.sqlite'), { readonly: true });
  return {
    rows: (sql) => Promise.resolve(db.prepare(sql).all() as Row[]),
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}

export function ms(value: unknown): number {
  return value instanceof Date ? value.getTime() : Date.parse(String(value));
}

export function num(value: unknown): number {
  return Number(value);
}
