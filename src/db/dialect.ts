import { PostgresAdapter, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * Which SQL dialect an executor (the database, or a transaction of it) speaks: the few
 * statements that differ (row locks, SKIP LOCKED, upserts, NOTIFY) ask this.
 */
export function isPostgres(executor: Kysely<DB>): boolean {
  return executor.getExecutor().adapter instanceof PostgresAdapter;
}
