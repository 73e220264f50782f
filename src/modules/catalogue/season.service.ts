import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { recordEvents, type EventContext } from '../outbox/outbox.writer.js';
import type { CheeseRepository } from './cheese.repository.js';

/**
 * "The return of seasonal cheeses" (decisions.md §4): when a seasonal cheese's window
 * opens, cheese.back_in_stock fires once per opening, whichever instance notices first.
 */
export class SeasonService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly cheeses: CheeseRepository,
    private readonly events: Omit<EventContext, 'requestId'>,
  ) {}

  /** Announces windows opening in the month of `now` (UTC). Returns how many were announced. */
  async announceOpenings(now = new Date()): Promise<number> {
    const month = now.getUTCMonth() + 1;
    const previous = month === 1 ? 12 : month - 1;
    const yearMonth = `${now.getUTCFullYear()}-${String(month).padStart(2, '0')}`;
    return this.db.transaction().execute(async (trx) => {
      const opened = await this.cheeses.claimSeasonOpenings(trx, month, previous, yearMonth);
      const events = opened.map((cheese) => ({
        type: 'cheese.back_in_stock' as const,
        aggregateType: 'cheese',
        aggregateId: String(cheese.id),
        data: { cheese_id: String(cheese.id), slug: cheese.slug, name: cheese.name, reason: 'season_opened', season_month: month, in_stock: Number(cheese.stock_grams) > 0 },
      }));
      await recordEvents(trx, events, { ...this.events, requestId: null });
      return opened.length;
    });
  }
}
