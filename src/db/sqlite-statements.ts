import type { Database as SqliteConnection, Statement } from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { CommitListeners } from './commit-signal.js';

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
export function cachingDatabase(connection: SqliteConnection, commits?: CommitListeners): SqliteDatabase {
  const statements = new Map<string, Statement>();
  // Tables inserted into by the open transaction: their listeners fire once it commits.
  const inserted = new Set<string>();
  const track = (sql: string) => {
    if (!commits) return;
    if (/^rollback/i.test(sql)) inserted.clear();
    else {
      const table = /^insert into "([a-z_]+)"/.exec(sql)?.[1];
      if (table) inserted.add(table);
    }
    if (!connection.inTransaction && inserted.size > 0) {
      for (const table of inserted) commits.fire(table);
      inserted.clear();
    }
  };
  const tracked = <T>(sql: string, result: T): T => {
    track(sql);
    return result;
  };
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
        all: (parameters) => tracked(sql, prepared.all(...bindable(parameters))),
        run: (parameters) => tracked(sql, prepared.run(...bindable(parameters))),
        iterate: (parameters) => prepared.iterate(...bindable(parameters)),
      };
    },
  };
}
