import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { CatalogueChanges } from './catalogue.changes.js';
import type { CheeseStatus } from './catalogue.table.js';
import type { StockRecord, StockRepository } from './stock.repository.js';
import { applyStockRules } from './stock.rules.js';

/** One line of stock to take or give back. */
export interface StockLine {
  cheeseId: number;
  grams: number;
}

/** What an order keeps of a cheese at placement: later catalogue changes never alter it. */
export interface StockSnapshot {
  cheeseId: number;
  slug: string;
  name: string;
  priceCents: number;
}

export type ReservationProblem =
  | { kind: 'unknown'; cheeseId: number }
  | { kind: 'not_available'; cheeseId: number; name: string; status: CheeseStatus | 'unpriced' }
  | { kind: 'short'; cheeseId: number; name: string; requestedGrams: number; availableGrams: number };

/**
 * Stock as other modules change it (orders): inside their transaction, with the catalogue's
 * stock rules and events (decisions.md §4), rows locked in id order on PostgreSQL so that
 * concurrent orders never oversell and never deadlock; SQLite has one writer at a time.
 */
export class StockService {
  constructor(
    private readonly options: { stock: StockRepository; outbox: Outbox; changes: CatalogueChanges; lowStockGrams: number },
  ) {}

  /**
   * Takes every line out of stock, or nothing: `problems` lists each line that cannot be
   * served (unknown, not `available` or without a price, or short) and then nothing was changed.
   */
  async reserve(trx: Transaction<DB>, lines: readonly StockLine[], ctx: ChangeContext): Promise<{ snapshots: StockSnapshot[]; problems: ReservationProblem[] }> {
    const records = new Map((await this.options.stock.lock(trx, lines.map((l) => l.cheeseId))).map((r) => [Number(r.id), r]));
    const problems: ReservationProblem[] = [];
    for (const line of lines) {
      const record = records.get(line.cheeseId);
      // A cheese sold out by its stock (decisions.md §4) is short, as any other (409): only a
      // cheese held back by staff, or one without a price, is not for sale (422).
      const soldOut = record !== undefined && record.status === 'sold' && Number(record.stock_grams) === 0;
      if (!record) problems.push({ kind: 'unknown', cheeseId: line.cheeseId });
      else if ((record.status !== 'available' && !soldOut) || record.price_cents === null) {
        problems.push({ kind: 'not_available', cheeseId: line.cheeseId, name: record.name, status: record.price_cents === null ? 'unpriced' : record.status });
      } else if (Number(record.stock_grams) < line.grams) {
        problems.push({ kind: 'short', cheeseId: line.cheeseId, name: record.name, requestedGrams: line.grams, availableGrams: Number(record.stock_grams) });
      }
    }
    if (problems.length > 0) return { snapshots: [], problems };
    for (const line of lines) await this.#adjust(trx, records.get(line.cheeseId)!, -line.grams, ctx);
    return {
      snapshots: lines.map((line) => {
        const record = records.get(line.cheeseId)!;
        return { cheeseId: line.cheeseId, slug: record.slug, name: record.name, priceCents: Number(record.price_cents) };
      }),
      problems,
    };
  }

  /** Gives stock back (a cancelled order); a cheese deleted since is skipped. */
  async release(trx: Transaction<DB>, lines: readonly StockLine[], ctx: ChangeContext): Promise<void> {
    const records = await this.options.stock.lock(trx, lines.map((l) => l.cheeseId));
    for (const record of records) {
      const grams = lines.filter((l) => l.cheeseId === Number(record.id)).reduce((sum, l) => sum + l.grams, 0);
      await this.#adjust(trx, record, grams, ctx);
    }
  }

  /** Tell the catalogue's readers (the read cache) once the caller's transaction has finished. */
  changed(): void {
    this.options.changes.notify();
  }

  async #adjust(trx: Transaction<DB>, record: StockRecord, deltaGrams: number, ctx: ChangeContext): Promise<void> {
    const before = Number(record.stock_grams);
    const after = before + deltaGrams;
    const rules = applyStockRules({
      before: { stockGrams: before, status: record.status },
      after: { stockGrams: after, status: record.status },
      requestedStatus: undefined,
      lowStockGrams: this.options.lowStockGrams,
    });
    await this.options.stock.set(trx, Number(record.id), after, rules.status);
    record.stock_grams = after;
    record.status = rules.status;
    const data = {
      cheese_id: String(record.id),
      slug: record.slug,
      name: record.name,
      status: rules.status,
      in_stock: after > 0,
      stock_quantity_kg: after / 1000,
      price_per_kg: record.price_cents === null ? null : Number(record.price_cents) / 100,
    };
    const events = rules.events.map((type) => ({
      type,
      aggregateType: 'cheese',
      audience: 'public' as const,
      aggregateId: String(record.id),
      data: type === 'cheese.low_stock' ? { ...data, low_stock_threshold_kg: this.options.lowStockGrams / 1000 } : data,
    }));
    await this.options.outbox.record(trx, events, ctx);
  }
}
