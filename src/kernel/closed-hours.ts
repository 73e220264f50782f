export const HOUR_MS = 3_600_000;

/**
 * How long after an hour ends it is taken as closed: entries are stamped when made and written
 * in batches (the request log's every 100 ms; instances' clocks agree to the second), so none
 * of an hour arrives later than this.
 */
export const SETTLE_MS = 60_000;

/** Hours kept at most (per instance); past it the oldest go first. */
const MAX_HOURS = 50_000;

/**
 * Per-hour summaries of an append-only log (the dashboard's pictures, issue 31): an hour that
 * has closed never changes, so it is read from the database once per instance and kept; only
 * the hour still open (and any never read) is read again. Without it, every view of the
 * overview summed a day of the log (100,000 entries: 50 ms and more on SQLite).
 */
export class ClosedHours<T> {
  readonly #kept = new Map<string, T>();

  /**
   * The summaries of every whole hour of [from, to) and of the open one, by hour start (epoch
   * ms): kept ones as kept, the others from `read(from, to)`, which answers the hours of its
   * range (a missing hour is `empty`). `from` is an hour's start.
   */
  async hours(scope: string, from: number, to: number, read: (from: number, to: number) => Promise<Map<number, T>>, empty: () => T): Promise<Map<number, T>> {
    const starts: number[] = [];
    for (let start = from; start < to; start += HOUR_MS) starts.push(start);
    const closed = (start: number) => start + HOUR_MS + SETTLE_MS <= to;
    const missing = starts.filter((start) => !closed(start) || !this.#kept.has(`${scope} ${start}`));
    const read_ = missing.length > 0 ? await read(missing[0]!, to) : new Map<number, T>();
    const answer = new Map<number, T>();
    for (const start of starts) {
      const key = `${scope} ${start}`;
      let value = this.#kept.get(key);
      if (value === undefined || !closed(start)) {
        value = read_.get(start) ?? empty();
        if (closed(start)) this.#keep(key, value);
      }
      answer.set(start, value);
    }
    return answer;
  }

  #keep(key: string, value: T): void {
    this.#kept.set(key, value);
    if (this.#kept.size > MAX_HOURS) this.#kept.delete(this.#kept.keys().next().value!);
  }
}
