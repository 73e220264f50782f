import type { Kysely, Transaction } from 'kysely';
import { NO_BROADCAST, type ChangeBroadcast } from '../../db/change-broadcast.js';
import type { DB } from '../../db/schema.js';

/**
 * Order-driven stock changes are told to other instances at most once per this window, per
 * instance: a NOTIFY per order costs about half of PostgreSQL's commit throughput (issue 20),
 * and another instance then shows a sale within this long plus a round trip (under 1 s).
 */
export const STOCK_BROADCAST_WINDOW_MS = 200;

/**
 * Every catalogue write goes through `transaction`, which tells whoever caches catalogue reads
 * that a write has finished: this instance's listeners at once, the other instances (the
 * change broadcast) once it has committed. Listeners also hear other instances' changes, and
 * a "flush" when the broadcast may have missed some.
 */
export class CatalogueChanges {
  readonly #listeners: (() => void)[] = [];
  #stockBroadcast: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly broadcast: ChangeBroadcast = NO_BROADCAST,
  ) {
    // Another instance's change, or messages possibly missed: either way, what is cached may be stale.
    broadcast.subscribe('catalogue', { message: () => this.#fire(), flush: () => this.#fire() });
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /**
   * A catalogue write made in another module's transaction (an order's stock) has finished:
   * this instance forgets at once, the others within STOCK_BROADCAST_WINDOW_MS (coalesced).
   */
  notify(): void {
    this.#fire();
    if (this.#stockBroadcast) return;
    this.#stockBroadcast = setTimeout(() => {
      this.#stockBroadcast = undefined;
      void this.broadcast.publish('catalogue');
    }, STOCK_BROADCAST_WINDOW_MS);
    this.#stockBroadcast.unref();
  }

  /** Sends a stock change still waiting for its window now: the instance is closing, before its broadcast does. */
  async close(): Promise<void> {
    if (!this.#stockBroadcast) return;
    clearTimeout(this.#stockBroadcast);
    this.#stockBroadcast = undefined;
    await this.broadcast.publish('catalogue');
  }

  /**
   * Runs `work` in a transaction and signals a change once it has finished, committed or not (a
   * spare signal costs one cache refill); once committed, other instances are told before this
   * resolves, so a client reading elsewhere after its write's answer does not read the old state.
   */
  async transaction<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await this.db.transaction().execute(work);
    } finally {
      this.#fire();
    }
    await this.broadcast.publish('catalogue');
    return result;
  }

  #fire(): void {
    for (const listener of this.#listeners) listener();
  }
}
