import type { AppConfig } from './config.js';
import type { Database } from './db/database.js';
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

/** First start and every start: migrate, seed an empty catalogue, make sure the first admin exists. */
export async function bootstrap(config: AppConfig, database: Database, modules: Modules, opts: { seed: boolean }): Promise<BootstrapResult> {
  const migrated = await migrateToLatest(database.db as never, database.schema);
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
