import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { isPostgres } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import type { CheeseStatus } from './catalogue.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

const selectStockForUpdate = prepared((db, { ids }: { ids: number[] }) => {
  const query = db.selectFrom('cheeses').select(['id', 'slug', 'name', 'status', 'price_cents', 'stock_grams']).where('id', 'in', ids).orderBy('id');
  return isPostgres(db) ? query.forUpdate() : query;
});

/** A cheese as stock changes see it. */
export type StockRecord = Awaited<ReturnType<typeof selectStockForUpdate>>[number];

const updateStock = prepared((db, { id, ...row }: { id: number; stock_grams: number; status: CheeseStatus; updated_at: string }) => db.updateTable('cheeses').set(row).where('id', '=', id));

/** The cheeses' stock as orders change it, inside the order's transaction (prepared statements: the hot path of placement). */
export class StockRepository {
  constructor(private readonly clock: Clock = systemClock) {}

  /**
   * What stock changes need of several cheeses, the rows locked (PostgreSQL) in id order so
   * that two orders never wait on each other in a cycle.
   */
  async lock(trx: Transaction<DB>, ids: readonly number[]): Promise<StockRecord[]> {
    if (ids.length === 0) return [];
    return selectStockForUpdate(trx, { ids: [...ids] });
  }

  /** Stock and status alone: what orders change, nothing of the description. */
  async set(trx: Transaction<DB>, id: number, stockGrams: number, status: CheeseStatus): Promise<void> {
    await updateStock(trx, { id, stock_grams: stockGrams, status, updated_at: this.clock.iso() });
  }
}
