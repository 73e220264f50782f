import type { Database } from '../../db/database.js';
import type { FeatureModule } from '../../kernel/module.js';
import { healthRoutes } from './health.routes.js';
import { Readiness } from './readiness.js';

export type HealthModule = FeatureModule<{ readiness: Readiness }>;

export function createHealthModule(options: { database: Database; version: string; environment: string }): HealthModule {
  const readiness = new Readiness(options.database);
  return {
    name: 'health',
    routes: async (app) => {
      await app.register(healthRoutes, { ...options, readiness });
    },
    jobs: [],
    provides: { readiness },
  };
}
