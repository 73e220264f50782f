import { LRUCache } from 'lru-cache';
import { countBounded } from '../../kernel/expiring-cache.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { takeAll, type BucketSpec, type BucketState } from './bucket.rules.js';
import { isKnown, KNOWN_FOR_MS, KNOWN_PER_NAME } from './brute-force.rules.js';

export type Taken = { allowed: boolean; tokens: number[] };

/** Where bucket states live: this process, or Redis shared by every instance. */
export interface BucketStore {
  /** `cost` -1 gives a token back (takeAll). */
  take(keys: readonly string[], specs: readonly BucketSpec[], cost?: number): Taken | Promise<Taken>;
  /** Whether `member` (an address) succeeded under `key` (a username) lately: brute-force.rules.ts. */
  knows(key: string, member: string): boolean | Promise<boolean>;
  remember(key: string, member: string): void | Promise<void>;
}

/**
 * Buckets in this process, at most `maxEntries` (least recently used dropped first: a dropped
 * bucket comes back full, which errs on the side of the client). Anonymous callers are keyed
 * by address, so without a bound they could fill memory. Known addresses are bounded the same
 * way; one forgotten makes its owner a stranger again, which errs on the side of caution.
 */
export class MemoryBucketStore implements BucketStore {
  /** No ttl: a bucket left alone refills by arithmetic (bucket.rules.ts), not by expiring. */
  readonly #states: LRUCache<string, BucketState>;
  /** Per name, its few latest addresses (a plain Map, oldest first: KNOWN_PER_NAME of them). */
  readonly #known: LRUCache<string, Map<string, number>>;

  constructor(
    maxEntries = 100_000,
    private readonly clock: Clock = systemClock,
  ) {
    this.#states = new LRUCache({ ...countBounded(maxEntries) });
    // Every address of a name is forgotten KNOWN_FOR_MS after the last success: so is the name.
    this.#known = new LRUCache({ ...countBounded(maxEntries), ttl: KNOWN_FOR_MS, ttlResolution: 0, perf: clock });
  }

  /** Synchronous: on every request, a promise here cost more than the arithmetic. */
  take(keys: readonly string[], specs: readonly BucketSpec[], cost = 1): Taken {
    const now = this.clock.now();
    const result = takeAll(keys.map((key) => this.#states.get(key)), specs, now, cost);
    keys.forEach((key, i) => this.#states.set(key, { tokens: result.tokens[i]!, at: now }));
    return result;
  }

  /** What the shared store answered, so a fallback goes on from there rather than from full buckets. */
  record(keys: readonly string[], tokens: readonly number[]): void {
    const now = this.clock.now();
    keys.forEach((key, i) => this.#states.set(key, { tokens: tokens[i]!, at: now }));
  }

  knows(key: string, member: string): boolean {
    return isKnown(this.#known.get(key)?.get(member), this.clock.now());
  }

  remember(key: string, member: string): void {
    const members = this.#known.get(key) ?? new Map<string, number>();
    members.delete(member);
    members.set(member, this.clock.now());
    if (members.size > KNOWN_PER_NAME) members.delete(members.keys().next().value!);
    this.#known.set(key, members);
  }
}

/**
 * What the shared store's failures cost, for metrics (read live: the numbers grow in place).
 * `fallbacks`: decisions made on this instance's buckets because Redis failed (or failed within
 * the last 5 s); `failClosed`: login and token attempts refused (503) because Redis did not
 * answer; `refusals`: requests refused over any limit (429).
 */
export interface LimitCounts {
  fallbacks: number;
  failClosed: number;
  refusals: number;
}

/** Redis is configured and did not answer a check that must not be made on local buckets. */
export class SharedStoreDown extends Error {}

/** After a failure, fail-open checks stay on local buckets this long before Redis is asked again. */
const LOCAL_AFTER_FAILURE_MS = 5000;

/**
 * The shared store (Redis) when configured, this process's otherwise; when Redis fails,
 * everything is counted here until it answers again, and that is logged (at most every 30 s)
 * and counted (`counts.fallbacks`) rather than refusing every request. The login and token
 * checks (`takeShared`, `knowsShared`) never fall back: a guesser must not get a fresh budget
 * per instance, nor one that resets while Redis is away.
 */
export class SharedOrLocalStore implements BucketStore {
  readonly #local: MemoryBucketStore;
  #sharedDownUntil = 0;
  #lastWarning = 0;
  readonly counts: LimitCounts = { fallbacks: 0, failClosed: 0, refusals: 0 };

  constructor(
    private readonly shared: BucketStore | undefined,
    private readonly warn: (message: string) => void,
    private readonly clock: Clock = systemClock,
  ) {
    this.#local = new MemoryBucketStore(undefined, clock);
  }

  take(keys: readonly string[], specs: readonly BucketSpec[], cost = 1): Taken | Promise<Taken> {
    // No closure on the local path: it runs on every request.
    if (this.shared === undefined) return this.#local.take(keys, specs, cost);
    if (this.#sharedUp()) return this.#orLocal(this.#mirrored(keys, this.shared.take(keys, specs, cost)), () => this.#fallback(keys, specs, cost));
    return this.#fallback(keys, specs, cost);
  }

  /** Redis's answer, kept locally too: when Redis fails, this instance counts on from what it last said. */
  async #mirrored(keys: readonly string[], taken: Taken | Promise<Taken>): Promise<Taken> {
    const answer = await taken;
    this.#local.record(keys, answer.tokens);
    return answer;
  }

  knows(key: string, member: string): boolean | Promise<boolean> {
    return this.#sharedUp() ? this.#orLocal(this.shared!.knows(key, member), () => this.#local.knows(key, member)) : this.#local.knows(key, member);
  }

  remember(key: string, member: string): void | Promise<void> {
    return this.#sharedUp() ? this.#orLocal(this.shared!.remember(key, member), () => this.#local.remember(key, member)) : this.#local.remember(key, member);
  }

  /**
   * Redis's answer, or SharedStoreDown: asked every time, even within the 5 s the fail-open
   * checks stay local, so these resume as soon as Redis answers (and bring the others back).
   */
  async takeShared(keys: readonly string[], specs: readonly BucketSpec[]): Promise<Taken> {
    if (this.shared === undefined) return this.#local.take(keys, specs);
    return this.#strictly(this.shared.take(keys, specs));
  }

  async knowsShared(key: string, member: string): Promise<boolean> {
    if (this.shared === undefined) return this.#local.knows(key, member);
    return this.#strictly(this.shared.knows(key, member));
  }

  async #strictly<T>(shared: T | Promise<T>): Promise<T> {
    try {
      const answer = await shared;
      this.#sharedDownUntil = 0;
      return answer;
    } catch (error) {
      this.#failed(error);
      this.counts.failClosed++;
      throw new SharedStoreDown(error instanceof Error ? error.message : String(error));
    }
  }

  #sharedUp(): boolean {
    return this.shared !== undefined && this.clock.now() >= this.#sharedDownUntil;
  }

  /** A check (cost 1) or a give-back (-1) on this instance's buckets in place of Redis's; a look (0) decides nothing. */
  #fallback(keys: readonly string[], specs: readonly BucketSpec[], cost: number): Taken {
    if (cost > 0) this.counts.fallbacks++;
    return this.#local.take(keys, specs, cost);
  }

  #orLocal<T>(shared: T | Promise<T>, local: () => T): Promise<T> {
    return Promise.resolve(shared).catch((error: unknown) => {
      this.#failed(error);
      return local();
    });
  }

  /** Serve on this instance's buckets for a few seconds, then try Redis again. */
  #failed(error: unknown): void {
    const now = this.clock.now();
    this.#sharedDownUntil = now + LOCAL_AFTER_FAILURE_MS;
    if (now - this.#lastWarning > 30_000) {
      this.#lastWarning = now;
      this.warn(`Redis unreachable for rate limits (${error instanceof Error ? error.message : String(error)}): counting on this instance only until it answers; logins and token requests are refused (503) meanwhile`);
    }
  }
}
