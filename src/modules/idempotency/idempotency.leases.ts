import type { IdempotencyRepository } from './idempotency.repository.js';

/** How long a running key stays locked without renewal: what a crashed instance's keys wait for. */
export const DEFAULT_LEASE_MS = 10_000;

/**
 * The Idempotency-Keys this instance holds for requests still running, kept locked by one
 * batched renewal every third of the lease (not a timer per request). A request's key thus
 * stays locked however long it runs, while a crashed instance's keys are free again within one
 * lease; `close` (the server draining) releases what is still held at once. The lease is
 * measured on the database's clock (see the repository), so instances' clocks may differ.
 */
export class HeldKeys {
  readonly #held = new Set<number>();
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly keys: IdempotencyRepository,
    readonly leaseMs: number,
    private readonly log: (message: string, details: Record<string, unknown>) => void = () => {},
  ) {}

  /** A request of this instance claimed (or took over) the key: keep it locked until `drop`. */
  hold(id: number): void {
    this.#held.add(id);
    this.#schedule();
  }

  /** The request is over (its record completed or released): stop renewing it. */
  drop(id: number): void {
    this.#held.delete(id);
  }

  get size(): number {
    return this.#held.size;
  }

  /** Stops renewing and releases every key still held (the instance is closing). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#renewing;
    const ids = [...this.#held];
    this.#held.clear();
    if (ids.length === 0) return;
    try {
      const released = await this.keys.releaseRunning(ids);
      this.log('released the Idempotency-Keys of requests cut off by the shutdown', { held: ids.length, released });
    } catch (err) {
      // They come free by themselves when their lease runs out.
      this.log('could not release held Idempotency-Keys; they come free when their lease ends', { err, held: ids.length });
    }
  }

  #schedule(): void {
    if (this.#closed || this.#timer || this.#renewing) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#renewing = this.#renew().finally(() => {
        this.#renewing = undefined;
        // The next renewal is counted from the end of this one: a slow database never piles them up.
        if (this.#held.size > 0) this.#schedule();
      });
    }, Math.max(100, Math.floor(this.leaseMs / 3)));
    // Never keeps the process alive by itself.
    this.#timer.unref();
  }

  async #renew(): Promise<void> {
    const ids = [...this.#held];
    if (ids.length === 0) return;
    try {
      await this.keys.renew(ids, this.leaseMs);
    } catch (err) {
      // Tried again a third of a lease later; two misses in a row and a retry may take a key over.
      this.log('could not renew held Idempotency-Keys', { err, held: ids.length });
    }
  }
}
