/**
 * The process's clock, the one place src/ reads the time of day (lint refuses `Date.now()` and
 * an argument-less `new Date()` elsewhere). The app's config carries one (`clock`, the system's
 * by default) and src/modules.ts hands it to every module, so a test moves time instead of
 * waiting for it. Not the database's clock (src/db/clock.ts): leases and due times shared by
 * several instances are compared against that one; this one stamps, expires and schedules
 * what one process holds.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  date(): Date;
  /** ISO 8601 with milliseconds, the form every stored timestamp takes. */
  iso(): string;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  date: () => new Date(),
  iso: () => new Date().toISOString(),
};

/** A clock that moves only when told to: tests advance it instead of sleeping. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start: number | Date | string = Date.now()) {
    this.#now = new Date(start).getTime();
  }

  now(): number {
    return this.#now;
  }

  date(): Date {
    return new Date(this.#now);
  }

  iso(): string {
    return this.date().toISOString();
  }

  advance(ms: number): void {
    this.#now += ms;
  }

  set(at: number | Date | string): void {
    this.#now = new Date(at).getTime();
  }
}
