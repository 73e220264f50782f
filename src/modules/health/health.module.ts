import type { Database } from '../../db/database.js';
import type { FeatureModule } from '../../kernel/module.js';
import { healthRoutes } from './health.routes.js';
import { Readiness } from './readiness.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
export { PROBE_PATHS } from './health.routes.js';

export type HealthModule = FeatureModule<{ readiness: Readiness }>;

export function createHealthModule(options: { database: Database; version: string; environment: string; clock?: Clock }): HealthModule {
  const readiness = new Readiness(options.database);
  return {
    name: 'health',
    routes: async (app) => {
      await app.register(healthRoutes, { ...options, clock: options.clock ?? systemClock, readiness });
    },
    jobs: [],
    provides: { readiness },
  };
}
