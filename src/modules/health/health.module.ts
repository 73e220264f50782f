import type { Database } from '../../db/database.js';
import type { FeatureModule } from '../../kernel/module.js';
import { healthRoutes } from './health.routes.js';

export type HealthModule = FeatureModule<Record<string, never>>;

export function createHealthModule(options: { database: Database; version: string; environment: string }): HealthModule {
  return {
    name: 'health',
    routes: async (app) => {
      await app.register(healthRoutes, options);
    },
    jobs: [],
    provides: {},
  };
}
