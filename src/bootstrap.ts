import { ConfigError, type AppConfig } from './config.js';
import type { Database } from './db/database.js';
import { DeploymentRepository } from './db/deployment.repository.js';
import { sql } from 'kysely';
import { migrateToLatest, pendingMigrations } from './db/migrate.js';
import type { Modules } from './modules.js';
import { SYSTEM_CONTEXT } from './kernel/change-context.js';
import { ROLE_SCOPES } from './kernel/scopes.js';

export interface BootstrapResult {
  migrations: string[];
  seededCheeses: number;
  adminUsername: string;
  generatedAdminPassword: string | undefined;
}

/** Seeding outside production, on a database a production deployment has used: nothing is seeded. */
export class ProductionDatabaseError extends ConfigError {}

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
  // Marked before anything is seeded, so even a first start that fails later leaves the mark.
  if (config.env === 'production') await deployment.markProduction();
  else if (opts.seed) await refuseProductionData(config, deployment);
  const seededCheeses = opts.seed ? await modules.catalogue.provides.seeder.seedIfEmpty() : 0;
  const admin = await modules.identity.provides.accounts.ensureAdmin(config.adminUsername, config.adminPassword);
  // Sandbox and development: the documented test customer and orders 1 to 10 (README, "Sandbox").
  if (opts.seed && config.env !== 'production') await seedSandbox(config, modules);
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

export const TEST_CUSTOMER = { username: 'test.customer', email: 'test.customer@example.com', password: 'Gruyere and crackers 2026' } as const;

async function seedSandbox(config: AppConfig, modules: Modules): Promise<void> {
  const { accounts } = modules.identity.provides;
  let account = await accounts.findByUsername(TEST_CUSTOMER.username);
  if (!account) {
    await modules.customers.provides.customers.signUp({ ...TEST_CUSTOMER, firstName: 'Test', lastName: 'Customer' }, SYSTEM_CONTEXT);
    account = (await accounts.findByUsername(TEST_CUSTOMER.username))!;
  }
  await modules.orders.provides.orders.seedSandbox({
    accountId: account.id,
    username: account.username,
    role: account.role,
    scopes: new Set(ROLE_SCOPES[account.role]),
    environment: config.env,
    credential: { kind: 'login_token', id: 0, expiresAt: null },
  });
}
