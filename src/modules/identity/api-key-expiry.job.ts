import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { SYSTEM_CONTEXT } from '../../kernel/change-context.js';
import type { Job } from '../../kernel/module.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { ApiKeyRepository } from './api-key.repository.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

const HOUR_MS = 60 * 60 * 1000;
const EXPIRY_WARNING_MS = 7 * 24 * HOUR_MS;

/** Records api_key.expiring once for each active key expiring within 7 days (decisions §6). */
export function apiKeyExpiryJob(options: { db: Kysely<DB>; keys: ApiKeyRepository; outbox: Outbox; clock?: Clock }): Job {
  const { db, keys, outbox } = options;
  const clock = options.clock ?? systemClock;
  return {
    name: 'api_key.expiring',
    everyMs: HOUR_MS,
    run: (now = clock.date()) =>
      db.transaction().execute(async (trx) => {
        const horizon = new Date(now.getTime() + EXPIRY_WARNING_MS).toISOString();
        const expiring = await keys.claimExpiring(trx, now.toISOString(), horizon);
        const events = expiring.map((key) => ({
          type: 'api_key.expiring' as const,
          aggregateType: 'api_key',
          audience: { accountId: key.accountId },
          aggregateId: String(key.id),
          data: { api_key_id: String(key.id), account_id: String(key.accountId), prefix: key.keyPrefix, name: key.name, expires_at: key.expiresAt },
        }));
        await outbox.record(trx, events, SYSTEM_CONTEXT);
        return expiring.length;
      }),
  };
}
