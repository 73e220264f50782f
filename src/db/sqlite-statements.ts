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
  // Each statement is read once, when prepared: which table it inserts into, whether it rolls back.
  const statements = new Map<string, { statement: Statement; insertsInto: string | undefined; rollsBack: boolean }>();
  // Tables inserted into by the open transaction: their listeners fire once it commits.
  const inserted = new Set<string>();
  const track = (entry: { insertsInto: string | undefined; rollsBack: boolean }) => {
    if (entry.rollsBack) inserted.clear();
    else if (entry.insertsInto) inserted.add(entry.insertsInto);
    if (inserted.size > 0 && !connection.inTransaction) {
      for (const table of inserted) commits?.fire(table);
      inserted.clear();
    }
  };
  return {
    close: () => connection.close(),
    prepare(sql: string): SqliteStatement {
      let entry = statements.get(sql);
      if (!entry) {
        entry = { statement: connection.prepare(sql), insertsInto: commits && /^insert into "([a-z_]+)"/.exec(sql)?.[1], rollsBack: commits !== undefined && /^rollback/i.test(sql) };
        if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
        statements.set(sql, entry);
      }
      const { statement } = entry;
      const tracked = <T>(result: T): T => {
        track(entry);
        return result;
      };
      return {
        reader: statement.reader,
        all: (parameters) => tracked(statement.all(...bindable(parameters))),
        run: (parameters) => tracked(statement.run(...bindable(parameters))),
        iterate: (parameters) => statement.iterate(...bindable(parameters)),
      };
    },
  };
}
