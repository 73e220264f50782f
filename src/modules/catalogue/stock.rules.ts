import type { CheeseStatus } from './catalogue.table.js';
import type { EventType } from '../outbox/outbox.module.js';

export interface StockChange {
  before: { stockGrams: number; status: CheeseStatus } | null;
  after: { stockGrams: number; status: CheeseStatus };
  /** The status the request itself asked for, if any. */
  requestedStatus: CheeseStatus | undefined;
  lowStockGrams: number;
}

/**
 * decisions.md §4: reaching 0 kg sells the cheese out; a restock from 0 makes it available
 * again (unless this very request holds it as `pending`); dropping below the threshold
 * warns once per crossing. Returns the status to store and the events to record.
 */
export function applyStockRules(change: StockChange): { status: CheeseStatus; events: EventType[] } {
  const { before, after, requestedStatus, lowStockGrams } = change;
  if (before === null) return { status: after.status, events: ['cheese.new_arrival'] };
  const events: EventType[] = [];
  let status = after.status;
  if (before.stockGrams > 0 && after.stockGrams === 0) {
    status = 'sold';
    events.push('cheese.out_of_stock');
  } else if (before.stockGrams === 0 && after.stockGrams > 0) {
    status = requestedStatus === 'pending' ? 'pending' : 'available';
    events.push('cheese.back_in_stock');
  } else if (before.stockGrams >= lowStockGrams && after.stockGrams > 0 && after.stockGrams < lowStockGrams) {
    events.push('cheese.low_stock');
  }
  return { status, events };
}
