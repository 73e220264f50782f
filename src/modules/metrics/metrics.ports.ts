import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * What the backlog gauges ask the modules that own the queues (the composition root plugs them
 * in). Each read takes the executor: the metrics run both in one transaction under a
 * statement timeout on PostgreSQL.
 */
export interface BacklogSources {
  /** The outbox: rows past a consumer's position, and when the oldest of them was recorded. */
  outbox: {
    behind(executor: Kysely<DB>, consumer: string): Promise<{ count: number; oldestAt: string | null }>;
  };
  /** Webhooks: deliveries pending (and of those, due at `now`) or dead-lettered. */
  deliveries: {
    backlog(executor: Kysely<DB>, now: string): Promise<{ pending: number; due: number; oldestDueAt: string | null; dead: number }>;
  };
}
