import type { Clock } from '../../src/kernel/clock.js';

/**
 * The wall's time plus what a test has skipped: time still flows, and `advance` jumps it ahead as
 * if that long had passed. For a whole app (workers, retries, version 7 ids that sort by the
 * clock's milliseconds), which a ManualClock standing still would stop; a ManualClock suits code
 * tested on its own.
 */
export class JumpingClock implements Clock {
  #skipped = 0;

  now(): number {
    return Date.now() + this.#skipped;
  }

  date(): Date {
    return new Date(this.now());
  }

  iso(): string {
    return this.date().toISOString();
  }

  advance(ms: number): void {
    this.#skipped += ms;
  }
}
