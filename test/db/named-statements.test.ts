import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { MAX_NAMED_PER_CONNECTION } from '../../src/db/named-statements.js';
import type { DB } from '../../src/db/schema.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { createTestStorage, POSTGRES_URL, type TestStorage } from '../helpers/database.js';

/**
 * Named prepared statements on PostgreSQL (src/db/named-statements.ts): a parameterised query
 * is parsed once per connection, the number kept per connection is bounded, a statement made
 * stale by a migration fails once (503) and works on the next call, and
 * DATABASE_PREPARED_STATEMENTS=off prepares nothing. One pooled connection, so every query
 * below runs on the session whose pg_prepared_statements it reads.
 */
describe.skipIf(!POSTGRES_URL)('named prepared statements (PostgreSQL)', () => {
  let storage: TestStorage;
  let named: Database;
  let unnamed: Database;
  const open = (preparedStatements: boolean) => openDatabase({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, databaseSchema: storage.databaseSchema, poolSize: 1, preparedStatements });
  const preparedOf = async (db: Kysely<DB>) => (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db)).rows;

  beforeAll(async () => {
    storage = await createTestStorage();
    named = open(true);
    unnamed = open(false);
    await sql`create table if not exists named_probe (id int primary key, label text)`.execute(named.db);
    await sql`insert into named_probe values (1, 'one') on conflict do nothing`.execute(named.db);
  });
  afterAll(async () => {
    await named?.close();
    await unnamed?.close();
    await storage?.dispose();
  });

  it('parses a parameterised query once per connection and reuses it', async () => {
    for (let i = 0; i < 3; i++) expect((await sql<{ label: string }>`select label from named_probe where id = ${1}`.execute(named.db)).rows).toEqual([{ label: 'one' }]);
    const mine = (await preparedOf(named.db)).filter((row) => row.statement.includes('named_probe where id'));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.name).toMatch(/^k[\w-]{22}_0$/);
  });

  it('a statement made stale by a migration fails once as unavailable (503), then works with the new columns', async () => {
    const select = () => sql<Record<string, unknown>>`select * from named_probe where id = ${1}`.execute(named.db);
    expect((await select()).rows).toEqual([{ id: 1, label: 'one' }]);
    await sql`alter table named_probe add column grams int default 5`.execute(unnamed.db);
    const stale = await select().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(stale).toBeInstanceOf(Error);
    expect(isDatabaseUnavailable(stale)).toBe(true);
    expect((await select()).rows).toEqual([{ id: 1, label: 'one', grams: 5 }]);
  });

  it(`keeps at most ${MAX_NAMED_PER_CONNECTION} per connection; the rest run unnamed and still answer`, async () => {
    for (let i = 0; i < MAX_NAMED_PER_CONNECTION + 20; i++) {
      const { rows } = await sql<{ n: number }>`select ${sql.lit(i)}::int + ${1}::int as n`.execute(named.db);
      expect(rows[0]!.n).toBe(i + 1);
    }
    expect((await preparedOf(named.db)).length).toBeLessThanOrEqual(MAX_NAMED_PER_CONNECTION);
  });

  it('DATABASE_PREPARED_STATEMENTS=off prepares nothing', async () => {
    await sql`select label from named_probe where id = ${1}`.execute(unnamed.db);
    expect(await preparedOf(unnamed.db)).toEqual([]);
  });
});
