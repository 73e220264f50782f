import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { FeatureModule } from '../../kernel/module.js';
import { IdempotencyRepository } from './idempotency.repository.js';

export { registerIdempotency, type IdempotencyOptions } from './idempotency.hooks.js';

export interface IdempotencyProvides {
  keys: IdempotencyRepository;
}

export type IdempotencyModule = FeatureModule<IdempotencyProvides>;

/** Idempotency-Key records, and the job that forgets them once their time is up. */
export function createIdempotencyModule(options: { db: Kysely<DB> }): IdempotencyModule {
  const keys = new IdempotencyRepository(options.db);
  return {
    name: 'idempotency',
    jobs: [{ name: 'idempotency-key-pruning', everyMs: 3_600_000, run: (now = new Date()) => keys.deleteExpired(now.toISOString()) }],
    provides: { keys },
  };
}
