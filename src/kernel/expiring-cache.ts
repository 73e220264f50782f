import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from './clock.js';

/**
 * What was looked up lately (a resolved credential, an account's plan), trusted for `ttlMs`
 * after it was stored: a hit does not extend it, so a change made elsewhere shows within that
 * bound. At most `max` entries, least recently used dropped first, so a stream of distinct
 * keys cannot grow it. A `ttlMs` of 0 keeps nothing. Synchronous: it sits on the request path.
 */
export class ExpiringCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  readonly #entries: LRUCache<K, V> | undefined;

  constructor(options: { ttlMs: number; max: number; clock?: Clock }) {
    if (options.ttlMs <= 0) return;
    this.#entries = new LRUCache<K, V>({
      // At most `max` entries counted as sizes of 1, not lru-cache's `max`: that one allocates
      // its arrays for `max` entries up front (several hundred KB per cache, idle).
      ...countBounded(options.max),
      ttl: Math.ceil(options.ttlMs),
      // An expired entry goes when next looked up: ttlAutopurge would keep a timer per entry,
      // and the default ttlResolution a timer per busy millisecond to cache the clock.
      ttlResolution: 0,
      // lru-cache reads its TTLs off `perf.now()`: ours, so a test's clock expires entries.
      perf: options.clock ?? systemClock,
    });
  }

  get size(): number {
    return this.#entries?.size ?? 0;
  }

  get(key: K): V | undefined {
    return this.#entries?.get(key);
  }

  set(key: K, value: V): void {
    this.#entries?.set(key, value);
  }

  delete(key: K): void {
    this.#entries?.delete(key);
  }

  /** Drops the entries `matches` picks: a revocation takes effect on this instance at once. */
  forgetWhere(matches: (value: V) => boolean): void {
    if (!this.#entries) return;
    // Collected first: lru-cache promises nothing about deletes in the middle of its own walk.
    const forgotten: K[] = [];
    for (const [key, value] of this.#entries.entries()) if (matches(value)) forgotten.push(key);
    for (const key of forgotten) this.#entries.delete(key);
  }
}

/**
 * lru-cache options bounding a cache to `entries` entries without allocating for all of them
 * at once: `max` preallocates six arrays of `max` slots (a 100,000-entry cache held 3.5 MB
 * idle), `maxSize` with every entry of size 1 grows them as entries come.
 */
export function countBounded(entries: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: entries, sizeCalculation: () => 1 };
}
