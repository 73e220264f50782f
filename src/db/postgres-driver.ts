import { createRequire } from 'node:module';
import type pgModule from 'pg';

const require = createRequire(import.meta.url);

/**
 * node-postgres, loaded with the first PostgreSQL connection rather than at start: a SQLite
 * instance (the default) never pays its memory and load time (docs/performance.md, "Start-up").
 * pg is CommonJS, so a synchronous require gives the same object the ESM default import would.
 */
export function postgresDriver(): typeof pgModule {
  return require('pg') as typeof pgModule;
}
