import { takeAll, type BucketSpec, type BucketState } from './bucket.rules.js';

/** Where bucket states live: this process, or Redis shared by every instance. */
export interface BucketStore {
  take(keys: readonly string[], specs: readonly BucketSpec[]): { allowed: boolean; tokens: number[] } | Promise<{ allowed: boolean; tokens: number[] }>;
}

/**
 * Buckets in this process, at most `maxEntries` (least recently used dropped first: a dropped
 * bucket comes back full, which errs on the side of the client). Anonymous callers are keyed
 * by address, so without a bound they could fill memory.
 */
export class MemoryBucketStore implements BucketStore {
  readonly #states = new Map<string, BucketState>();

  constructor(private readonly maxEntries = 100_000) {}

  /** Synchronous: on every request, a promise here cost more than the arithmetic. */
  take(keys: readonly string[], specs: readonly BucketSpec[]): { allowed: boolean; tokens: number[] } {
    const now = Date.now();
    const result = takeAll(keys.map((key) => this.#states.get(key)), specs, now);
    keys.forEach((key, i) => {
      this.#states.delete(key);
      this.#states.set(key, { tokens: result.tokens[i]!, at: now });
    });
    while (this.#states.size > this.maxEntries) this.#states.delete(this.#states.keys().next().value!);
    return result;
  }
}
