import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLES } from '../../src/db/schema.js';
import type { Nullability } from '../../src/db/table-columns.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECT } from '../helpers/database.js';

/**
 * Each module's `*.table.ts` against what the migrations build, on this run's dialect. The
 * compiler ties every table type to its column descriptor (src/db/table-columns.ts) and DB to
 * TABLES; this ties the descriptors to the database, so a table type cannot drift from its
 * migration unnoticed.
 */
type MigratedTables = Map<string, Record<string, Nullability>>;

let t: TestApp;
let migrated: MigratedTables;
beforeAll(async () => {
  t = await createTestApp();
  migrated = await migratedTables(t);
});
afterAll(async () => {
  await t?.close();
});

async function migratedTables({ database }: TestApp): Promise<MigratedTables> {
  // On PostgreSQL the introspection sees every schema, other test files' too: keep this one's.
  const tables = (await database.db.introspection.getTables()).filter((table) => DIALECT === 'sqlite' || table.schema === database.schema);
  return new Map(
    tables.map((table) => [
      table.name,
      Object.fromEntries(
        table.columns.map((column) => {
          // SQLite reports an INTEGER PRIMARY KEY (the rowid, which Kysely flags as auto-incrementing)
          // as nullable, yet it never holds null.
          const nullable = column.isNullable && !(DIALECT === 'sqlite' && column.isAutoIncrementing);
          return [column.name, nullable ? 'nullable' : 'not null'];
        }),
      ),
    ]),
  );
}

describe(`table types match the migrated database (${DIALECT})`, () => {
  it.each(Object.entries(TABLES))('%s: same columns, same nullability', (table, columns) => {
    expect(migrated.has(table), `table ${table} is not in the migrated database`).toBe(true);
    expect(migrated.get(table)).toEqual(columns);
  });

  it('has no table without a table type (Kysely’s own aside)', () => {
    expect([...migrated.keys()].sort()).toEqual(Object.keys(TABLES).sort());
  });
});
