import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, TEST_CUSTOMER } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrations, pendingMigrations } from '../../src/db/migrate.js';
import { createModules, type Modules } from '../../src/modules.js';
import { createTestStorage, DIALECT, type TestStorage } from '../helpers/database.js';

/**
 * Three instances booting at once on one empty PostgreSQL database (issue 20): the bootstrap's
 * advisory lock lets one migrate and seed while the others wait and then find it done.
 * SQLite has one process per file, so nothing to race.
 */
describe.skipIf(DIALECT !== 'postgres')('three bootstraps at once on one PostgreSQL schema', () => {
  let storage: TestStorage;
  const instances: { database: Database; modules: Modules }[] = [];

  beforeAll(async () => {
    storage = await createTestStorage();
    const env = { DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl, DATABASE_SCHEMA: storage.databaseSchema, LOG_LEVEL: 'silent' };
    for (let i = 0; i < 3; i++) {
      const config = loadConfig(env);
      const database = openDatabase({ ...config, poolSize: 4 });
      instances.push({ database, modules: createModules(config, database) });
    }
  });
  afterAll(async () => {
    for (const { database, modules } of instances) {
      await modules.limits.provides.close();
      await database.close();
    }
    await storage.dispose();
  });

  it('migrates once, creates one admin, and seeds the catalogue and the sandbox once', async () => {
    const config = loadConfig({ DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl, DATABASE_SCHEMA: storage.databaseSchema, LOG_LEVEL: 'silent' });
    const results = await Promise.all(instances.map(({ database, modules }) => bootstrap(config, database, modules, { seed: true })));

    const migrated = results.filter((r) => r.migrations.length > 0);
    expect(migrated).toHaveLength(1);
    expect(migrated[0]!.migrations).toEqual(Object.keys(migrations));
    expect(results.filter((r) => r.generatedAdminPassword !== undefined)).toHaveLength(1);
    expect(results.filter((r) => r.seededCheeses > 0)).toHaveLength(1);

    const { db } = instances[0]!.database;
    const count = async (table: 'accounts' | 'orders' | 'cheeses', where?: [string, string]) => {
      let query = db.selectFrom(table).select(sql<number>`count(*)`.as('n'));
      if (where) query = query.where(sql.ref(where[0]), '=', where[1]);
      return Number((await query.executeTakeFirstOrThrow()).n);
    };
    expect(await count('accounts', ['username', 'admin'])).toBe(1);
    expect(await count('accounts', ['username', TEST_CUSTOMER.username])).toBe(1);
    expect(await count('orders')).toBe(10);
    expect(await count('cheeses')).toBe(results.find((r) => r.seededCheeses > 0)!.seededCheeses);
    expect(await pendingMigrations(db as never, storage.databaseSchema)).toEqual([]);
  }, 90_000);

  it('refuses to start with MIGRATE_ON_BOOT=false only while the schema is behind', async () => {
    const { database, modules } = instances[1]!;
    const config = loadConfig({ DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl, DATABASE_SCHEMA: storage.databaseSchema, LOG_LEVEL: 'silent' });
    // Current now: starts without migrating.
    const result = await bootstrap(config, database, modules, { seed: true, migrate: false });
    expect(result.migrations).toEqual([]);
    // A database behind (the last migration's row removed): refused, naming `migrate`.
    const last = Object.keys(migrations).at(-1)!;
    await sql`delete from ${sql.table('kysely_migration')} where name = ${last}`.execute(database.db);
    try {
      await expect(bootstrap(config, database, modules, { seed: true, migrate: false })).rejects.toThrow(/schema is behind.*0020|fromagerie migrate/);
    } finally {
      await sql`insert into ${sql.table('kysely_migration')} (name, timestamp) values (${last}, ${new Date().toISOString()})`.execute(database.db);
    }
  }, 60_000);
});
