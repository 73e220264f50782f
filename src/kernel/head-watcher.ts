import { TooManyRequestsError } from './errors.js';

/** While requests are held, the head is read at least this often (and at once on a commit signal). */
export const WATCH_INTERVAL_MS = 500;
/** Rows read per look at the head; past that many new rows every held request is woken. */
const BATCH = 500;

/** A held request's interest: whether a row concerns it. */
export type RowFilter<Row> = (row: Row) => boolean;

interface Waiter<Row> {
  concerns: RowFilter<Row>;
  wake: () => void;
}

/**
 * An append-only log as a watcher reads it. `beyond` returns rows in log order past a
 * position, and only from the prefix that can no longer grow behind its end (a reader moving
 * forward through it never skips a row that commits late).
 */
export interface WatchedLog<Row, Position> {
  head(): Promise<Position | undefined>;
  beyond(from: Position | undefined, limit: number): Promise<Row[]>;
  positionOf(row: Row): Position;
}

export interface HeadWatcherOptions<Row, Position> {
  log: WatchedLog<Row, Position>;
  /** Calls `listener` after each commit that added rows (this instance's at once, others' through the commit signal); answers how to stop. */
  afterCommit?: (listener: () => void) => () => void;
  /** Held requests of one account on this instance at once; past it a 429. */
  maxHeldPerAccount: number;
  /** What the 429 tells the caller to do instead (a sentence). */
  instead: string;
  intervalMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * One per instance and log, for long polls (`wait` on the event log and the request log):
 * while any request is held it reads the rows past the log's head, on every commit it hears of
 * and at least every WATCH_INTERVAL_MS, and wakes only the held requests a new row concerns
 * (each then reads its own page once). So the database's work per second is one small read,
 * whatever the number of held requests; none is done while nobody waits. The log's readable
 * prefix only grows at its end (WatchedLog), so "past the head" never misses a row.
 */
export class HeadWatcher<Row, Position> {
  readonly #waiters = new Set<Waiter<Row>>();
  readonly #heldPerAccount = new Map<string, number>();
  /** The head this watcher has read up to: set while anybody waits. */
  #head: Promise<Position | undefined> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopSignal: (() => void) | undefined;
  #reading = false;
  #readAgain = false;
  #closed = false;

  constructor(private readonly options: HeadWatcherOptions<Row, Position>) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** Counts a held request of `account`: 429 past the limit. Call the answer when it ends. */
  hold(account: string): () => void {
    const held = this.#heldPerAccount.get(account) ?? 0;
    if (held >= this.options.maxHeldPerAccount) {
      throw new TooManyRequestsError(
        `At most ${this.options.maxHeldPerAccount} requests of an account may be held at once on one instance (wait); this one would be one more. ${this.options.instead}`,
        1,
      );
    }
    this.#heldPerAccount.set(account, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#heldPerAccount.get(account) ?? 1) - 1;
      if (left === 0) this.#heldPerAccount.delete(account);
      else this.#heldPerAccount.set(account, left);
    };
  }

  /**
   * Registers interest before the caller reads its page: `started` resolves once the head is
   * known (read the page after it, so every row past what the page saw wakes `woken`); `woken`
   * resolves when a row `concerns` arrives, the watcher closes or `signal` aborts.
   */
  watch(concerns: RowFilter<Row>, signal: AbortSignal): { started: Promise<void>; woken: Promise<void> } {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    if (this.#closed || signal.aborted) return { started: Promise.resolve(), woken: Promise.resolve() };
    const waiter: Waiter<Row> = { concerns, wake };
    const end = () => {
      this.#waiters.delete(waiter);
      signal.removeEventListener('abort', end);
      if (this.#waiters.size === 0) this.#stop();
      wake();
    };
    waiter.wake = end;
    signal.addEventListener('abort', end, { once: true });
    this.#waiters.add(waiter);
    const started = this.#start().then(
      () => undefined,
      () => undefined,
    );
    return { started, woken };
  }

  /**
   * A held read: `read` once, and while it finds nothing, again each time a row `concerns`
   * arrives, until `waitMs` ends, the client goes away (`clientGone`) or the watcher closes;
   * then the last read stands. Counts against the account's held requests (429 past them).
   */
  async held<Item>(account: string, concerns: RowFilter<Row>, waitMs: number, read: () => Promise<Item[]>, clientGone?: AbortSignal): Promise<Item[]> {
    const release = this.hold(account);
    const ended = AbortSignal.any([AbortSignal.timeout(waitMs), ...(clientGone ? [clientGone] : [])]);
    try {
      for (;;) {
        const { started, woken } = this.watch(concerns, ended);
        await started;
        const rows = await read();
        if (rows.length > 0 || ended.aborted || this.#closed) return rows;
        await woken;
        if (ended.aborted || this.#closed) return rows;
      }
    } finally {
      release();
    }
  }

  /** SIGTERM or the app closing: every held request answers now, and none is held again. */
  close(): void {
    this.#closed = true;
    for (const waiter of [...this.#waiters]) waiter.wake();
    this.#stop();
  }

  #start(): Promise<Position | undefined> {
    if (this.#head) return this.#head;
    this.#head = this.options.log.head();
    this.#head.catch((error: unknown) => {
      this.#head = undefined;
      this.options.onError?.(error);
    });
    this.#timer = setInterval(() => void this.#read(), this.options.intervalMs ?? WATCH_INTERVAL_MS);
    this.#timer.unref();
    this.#stopSignal = this.options.afterCommit?.(() => void this.#read());
    return this.#head;
  }

  #stop(): void {
    if (this.#waiters.size > 0 && !this.#closed) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopSignal?.();
    this.#stopSignal = undefined;
    this.#head = undefined;
  }

  /** One read at a time; a commit heard during one makes one more after it. */
  async #read(): Promise<void> {
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = true;
    try {
      do {
        this.#readAgain = false;
        const head = this.#head;
        if (!head) return;
        const from = await head;
        const rows = await this.options.log.beyond(from, BATCH);
        if (rows.length === 0 || this.#head !== head) continue;
        this.#head = Promise.resolve(this.options.log.positionOf(rows[rows.length - 1]!));
        const everyone = rows.length === BATCH;
        for (const waiter of [...this.#waiters]) if (everyone || rows.some(waiter.concerns)) waiter.wake();
      } while (this.#readAgain);
    } catch (error) {
      // The next tick tries again; held requests answer at their deadline meanwhile.
      this.options.onError?.(error);
    } finally {
      this.#reading = false;
    }
  }
}
