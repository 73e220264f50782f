import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * Every catalogue write goes through `transaction`, which tells whoever caches catalogue reads
 * that a write has finished: the HTTP read cache today, a cross-instance fan-out (Redis) when
 * several instances share one database.
 */
export class CatalogueChanges {
  readonly #listeners: (() => void)[] = [];

  constructor(private readonly db: Kysely<DB>) {}

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** A catalogue write made in another module's transaction (an order's stock) has finished. */
  notify(): void {
    for (const listener of this.#listeners) listener();
  }

  /** Runs `work` in a transaction and signals a change once it has finished, committed or not (a spare signal costs one cache refill). */
  async transaction<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(work);
    } finally {
      this.notify();
    }
  }
}
