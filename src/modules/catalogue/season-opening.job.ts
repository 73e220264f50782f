import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { SYSTEM_CONTEXT } from '../../kernel/change-context.js';
import type { Job } from '../../kernel/module.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { CheeseRepository } from './cheese.repository.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * "The return of seasonal cheeses" (decisions.md §4): when a seasonal cheese's window
 * opens, cheese.back_in_stock fires once per opening, whichever instance notices first.
 * `run(now)` announces the windows opening in the month of `now` (UTC).
 */
export function seasonOpeningJob(options: { db: Kysely<DB>; cheeses: CheeseRepository; outbox: Outbox; clock?: Clock }): Job {
  const { db, cheeses, outbox } = options;
  const clock = options.clock ?? systemClock;
  return {
    name: 'cheese.season_opened',
    everyMs: HOUR_MS,
    run: (now = clock.date()) => {
      const month = now.getUTCMonth() + 1;
      const previous = month === 1 ? 12 : month - 1;
      const yearMonth = `${now.getUTCFullYear()}-${String(month).padStart(2, '0')}`;
      return db.transaction().execute(async (trx) => {
        const opened = await cheeses.claimSeasonOpenings(trx, month, previous, yearMonth);
        const events = opened.map((cheese) => ({
          type: 'cheese.back_in_stock' as const,
          aggregateType: 'cheese',
          audience: 'public' as const,
          aggregateId: String(cheese.id),
          data: { cheese_id: String(cheese.id), slug: cheese.slug, name: cheese.name, reason: 'season_opened', season_month: month, in_stock: Number(cheese.stock_grams) > 0 },
        }));
        await outbox.record(trx, events, SYSTEM_CONTEXT);
        return opened.length;
      });
    },
  };
}
