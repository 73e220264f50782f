import { ConfigError, type AppConfig } from './config.js';
import type { Database } from './db/database.js';
import { DeploymentRepository } from './db/deployment.repository.js';
import { migrateToLatest } from './db/migrate.js';
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

/** First start and every start: migrate, seed an empty catalogue, make sure the first admin exists. */
export async function bootstrap(config: AppConfig, database: Database, modules: Modules, opts: { seed: boolean }): Promise<BootstrapResult> {
  const migrated = await migrateToLatest(database.db as never, database.schema);
  const deployment = new DeploymentRepository(database.db);
  // Marked before anything is seeded, so even a first start that fails later leaves the mark.
  if (config.env === 'production') await deployment.markProduction();
  else if (opts.seed) await refuseProductionData(config, deployment);
  const seededCheeses = opts.seed ? await modules.catalogue.provides.seeder.seedIfEmpty() : 0;
  const admin = await modules.identity.provides.accounts.ensureAdmin(config.adminUsername, config.adminPassword);
  // Sandbox and development: the documented test customer and orders 1 to 10 (README, "Sandbox").
  if (opts.seed && config.env !== 'production') await seedSandbox(config, modules);
  return {
    migrations: (migrated.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
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
