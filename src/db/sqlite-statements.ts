import type { Database as SqliteConnection, Statement } from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

const MAX_STATEMENTS = 500;

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; SQLite stores booleans as 0/1. */
function bindable(parameters: ReadonlyArray<unknown>): unknown[] {
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/**
 * What Kysely's SQLite driver talks to. Kysely prepares every query anew, so SQLite parsed
 * and planned each statement on every request (~19% of a GET's CPU, see docs/performance.md);
 * here prepared statements are kept by SQL text. Booleans are converted at bind time, so
 * repositories write true/false on both dialects.
 */
export function cachingDatabase(connection: SqliteConnection): SqliteDatabase {
  const statements = new Map<string, Statement>();
  return {
    close: () => connection.close(),
    prepare(sql: string): SqliteStatement {
      let statement = statements.get(sql);
      if (!statement) {
        statement = connection.prepare(sql);
        if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
        statements.set(sql, statement);
      }
      const prepared = statement;
      return {
        reader: prepared.reader,
        all: (parameters) => prepared.all(...bindable(parameters)),
        run: (parameters) => prepared.run(...bindable(parameters)),
        iterate: (parameters) => prepared.iterate(...bindable(parameters)),
      };
    },
  };
}
