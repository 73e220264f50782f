import type { AppConfig } from './config.js';
import type { Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import type { Services } from './services.js';

export interface BootstrapResult {
  migrations: string[];
  seededCheeses: number;
  adminUsername: string;
  generatedAdminPassword: string | undefined;
}

/** First start and every start: migrate, seed an empty catalogue, make sure the first admin exists. */
export async function bootstrap(config: AppConfig, database: Database, services: Services, opts: { seed: boolean }): Promise<BootstrapResult> {
  const migrated = await migrateToLatest(database.db as never, database.schema);
  const seededCheeses = opts.seed ? await services.seeder.seedIfEmpty() : 0;
  const admin = await services.accounts.ensureAdmin(config.adminUsername, config.adminPassword);
  return {
    migrations: (migrated.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
    seededCheeses,
    adminUsername: admin.account.username,
    generatedAdminPassword: admin.generatedPassword,
  };
}
