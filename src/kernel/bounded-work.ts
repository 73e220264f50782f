/**
 * At most `concurrency` pieces of work at once and `queue` more waiting; beyond that a caller
 * is turned away at once rather than held (and its memory with it). Used for image decoding,
 * whose memory grows with every upload in flight.
 */
export class BoundedWork {
  #active = 0;
  /** Insertion order is arrival order: the longest waiting starts first. */
  readonly #waiting = new Set<() => void>();

  constructor(
    readonly concurrency: number,
    readonly queue: number,
  ) {}

  /**
   * A slot: null at once when every slot and every queue place is taken; else a promise of
   * its release function when the work may start, or of undefined when `abandon` fired while
   * waiting (the caller has gone: it leaves the queue). Releasing twice is harmless.
   */
  tryAcquire(abandon: AbortSignal): Promise<(() => void) | undefined> | null {
    if (abandon.aborted) return Promise.resolve(undefined);
    if (this.#active < this.concurrency) {
      this.#active++;
      return Promise.resolve(this.#release());
    }
    if (this.#waiting.size >= this.queue) return null;
    return new Promise((resolve) => {
      const leave = () => {
        this.#waiting.delete(start);
        resolve(undefined);
      };
      const start = () => {
        abandon.removeEventListener('abort', leave);
        resolve(this.#release());
      };
      this.#waiting.add(start);
      abandon.addEventListener('abort', leave, { once: true });
    });
  }

  /** Hands the slot to the longest waiting, or frees it. */
  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const [next] = this.#waiting;
      if (next) {
        this.#waiting.delete(next);
        next();
      } else {
        this.#active--;
      }
    };
  }
}
