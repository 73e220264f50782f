import { ConfigError, type AppConfig } from './config.js';
import type { Database } from './db/database.js';
import { DeploymentRepository } from './db/deployment.repository.js';
import { sql } from 'kysely';
import { migrateToLatest, pendingMigrations } from './db/migrate.js';
import type { Modules } from './modules.js';
import { refuseDevelopmentFixtures, seedSandbox } from './fixtures.js';
import { accountPasswordProblem } from './modules/customers/customers.module.js';

export { TEST_CUSTOMER } from './fixtures.js';

export interface BootstrapResult {
  migrations: string[];
  seededCheeses: number;
  adminUsername: string;
  generatedAdminPassword: string | undefined;
}

/** Seeding outside production, on a database a production deployment has used: nothing is seeded. */
export class ProductionDatabaseError extends ConfigError {}

/** ADMIN_PASSWORD, about to create the first admin, breaks the password policy. */
export class AdminPasswordError extends ConfigError {}

/** `MIGRATE_ON_BOOT=false` and the schema is behind: the server does not start. */
export class SchemaBehindError extends ConfigError {}

/**
 * First start and every start: migrate, seed an empty catalogue, make sure the first admin exists.
 * On PostgreSQL the whole of it holds an advisory lock (one per schema), so instances booting at
 * once on one database take turns: the first does the work, the others find it done (each step
 * checks before it acts). SQLite needs none: one process owns the file.
 * `migrate: false` (MIGRATE_ON_BOOT=false) applies nothing and refuses a schema that is behind.
 */
export async function bootstrap(config: AppConfig, database: Database, modules: Modules, opts: { seed: boolean; migrate?: boolean }): Promise<BootstrapResult> {
  return withBootstrapLock(database, () => firstStartSetup(config, database, modules, opts));
}

/** Runs `work` holding this schema's bootstrap lock (PostgreSQL), on a connection of its own. */
export async function withBootstrapLock<T>(database: Database, work: () => Promise<T>): Promise<T> {
  if (database.dialect !== 'postgres') return work();
  const key = `fromagerie:bootstrap:${database.schema ?? 'public'}`;
  return database.db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(hashtext(${key}))`.execute(connection);
    try {
      return await work();
    } finally {
      // A session lock: released explicitly (and by PostgreSQL if the connection dies).
      await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(connection).catch(() => undefined);
    }
  });
}

async function firstStartSetup(config: AppConfig, database: Database, modules: Modules, opts: { seed: boolean; migrate?: boolean }): Promise<BootstrapResult> {
  let applied: string[] = [];
  if (opts.migrate === false) {
    const pending = await pendingMigrations(database.db as never, database.schema);
    if (pending.length > 0) {
      throw new SchemaBehindError(
        `the database schema is behind this version (${pending.length} pending migration(s): ${pending.join(', ')}) and MIGRATE_ON_BOOT=false: ` +
          'run `fromagerie migrate` (or `npm run cli -- migrate`) first, or set MIGRATE_ON_BOOT=true',
      );
    }
  } else {
    const migrated = await migrateToLatest(database.db as never, database.schema);
    applied = (migrated.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }
  const deployment = new DeploymentRepository(database.db);
  if (config.env === 'production') {
    // Development's fixtures (a published password) never serve production: refused before the
    // mark, so a refused start leaves the store as it found it (src/fixtures.ts).
    await refuseDevelopmentFixtures(database, modules);
    // Marked before anything is seeded, so even a first start that fails later leaves the mark.
    await deployment.markProduction();
  } else if (opts.seed) await refuseProductionData(config, deployment);
  const seededCheeses = opts.seed ? await modules.catalogue.provides.seeder.seedIfEmpty() : 0;
  const admin = await modules.identity.provides.accounts.ensureAdmin(config.adminUsername, config.adminPassword, (password) => {
    // The rule `admin reset-password` applies, checked only when the password is used (first start).
    const problem = accountPasswordProblem(password, config.adminUsername);
    if (problem) throw new AdminPasswordError(`ADMIN_PASSWORD ${problem} (ADMIN_USERNAME is "${config.adminUsername}"): the first admin was not created. Set another ADMIN_PASSWORD, or leave it unset outside production to have one generated and printed once.`);
  });
  // Sandbox and development: the documented test customer and orders 1 to 10 (README, "Sandbox").
  if (opts.seed && config.env !== 'production') await seedSandbox(database, modules, config.env);
  return {
    migrations: applied,
    seededCheeses,
    adminUsername: admin.account.username,
    generatedAdminPassword: admin.generatedPassword,
  };
}

/**
 * Outside production seeding creates the sandbox's test customer, whose password is published:
 * never on production data, reached by forgetting CHEESE_ENV. Refused whole, before the
 * catalogue or the admin: the catalogue alone is what a start with CHEESE_ENV=production seeds.
 */
async function refuseProductionData(config: AppConfig, deployment: DeploymentRepository): Promise<void> {
  const since = await deployment.productionSince();
  if (since === null) return;
  throw new ProductionDatabaseError(
    `refusing to seed: a production deployment has used this database since ${since}, and with CHEESE_ENV=${config.env} ` +
      "seeding would create the sandbox's sample accounts, whose passwords are published. " +
      'Set CHEESE_ENV=production (which seeds only an empty catalogue), or use another database.',
  );
}

