import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { FeatureModule } from '../../kernel/module.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { DEFAULT_LEASE_MS, HeldKeys } from './idempotency.leases.js';

import { idempotencyStages } from './idempotency.hooks.js';
import { documentIdempotency } from './idempotency.openapi.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export interface IdempotencyProvides {
  keys: IdempotencyRepository;
  /** The keys this instance's running requests hold; `close()` releases them (the server's shutdown). */
  leases: HeldKeys;
}

export type IdempotencyModule = FeatureModule<IdempotencyProvides>;

/** Idempotency-Key: its stages in the request pipeline, its records, and the job that forgets them once their time is up. */
export function createIdempotencyModule(options: { db: Kysely<DB>; ttlMs: number; leaseMs?: number | undefined; log?: (message: string, details: Record<string, unknown>) => void; clock?: Clock }): IdempotencyModule {
  const clock = options.clock ?? systemClock;
  const keys = new IdempotencyRepository(options.db, clock);
  const leases = new HeldKeys(keys, options.leaseMs ?? DEFAULT_LEASE_MS, options.log);
  return {
    name: 'idempotency',
    jobs: [{ name: 'idempotency-key-pruning', everyMs: 3_600_000, run: (now = clock.date()) => keys.deleteExpired(now.toISOString()) }],
    // Replays before the handler, records as the answer is sent, on the routes that declare `config.idempotent`.
    stages: idempotencyStages({ keys, ttlMs: options.ttlMs, leases, clock }),
    documents: documentIdempotency,
    provides: { keys, leases },
  };
}
