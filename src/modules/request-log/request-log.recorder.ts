import type { Insertable } from 'kysely';
import type { RequestLogTable } from './request-log.table.js';

export type RequestLogEntry = Insertable<RequestLogTable>;

export interface RecorderOptions<T> {
  /** Writes one batch in one transaction. */
  write(entries: T[]): Promise<void>;
  /** Entries waiting at most; past it new ones are dropped and counted, never the request. */
  capacity: number;
  batchSize: number;
  /** How long an entry waits for companions before its batch is written. */
  flushMs: number;
  /** A dropped entry or a failed batch (the caller rate-limits the lines). */
  warn(message: string): void;
}

/** Live counts, read when metrics are scraped. */
export interface RecorderCounts {
  recorded: number;
  dropped: number;
  queued: number;
}

/**
 * Recording never slows or fails a request: the answer's hook only pushes onto a bounded
 * queue, and one writer per instance empties it in batches (one INSERT of up to `batchSize`
 * rows per transaction). A full queue, or a batch the database refused, loses entries: they
 * are counted (fromagerie_request_log_dropped_total) and told in a rate-limited log line.
 */
export class RequestLogRecorder<T = RequestLogEntry> {
  readonly counts: RecorderCounts = { recorded: 0, dropped: 0, queued: 0 };
  #queue: T[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #closed = false;

  constructor(private readonly options: RecorderOptions<T>) {}

  record(entry: T): void {
    if (this.#closed || this.#queue.length >= this.options.capacity) {
      this.counts.dropped += 1;
      this.options.warn(`request log: queue full (${this.options.capacity} entries waiting): entries are being dropped`);
      return;
    }
    this.#queue.push(entry);
    this.counts.queued = this.#queue.length;
    if (this.#queue.length >= this.options.batchSize) this.#writeSoon(0);
    else this.#writeSoon(this.options.flushMs);
  }

  /** An entry that never reached the queue. */
  lost(message: string): void {
    this.counts.dropped += 1;
    this.options.warn(message);
  }

  /** Writes everything queued now (tests, and shutdown). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#writing || this.#queue.length > 0) {
      if (this.#writing) await this.#writing;
      else await this.#writeBatches();
    }
  }

  /** The server is stopping: what is queued is written, nothing more is taken. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  #writeSoon(delayMs: number): void {
    if (this.#writing) return;
    if (this.#timer && delayMs > 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#writeBatches();
    }, delayMs);
    this.#timer.unref();
  }

  #writeBatches(): Promise<void> {
    this.#writing ??= (async () => {
      try {
        while (this.#queue.length > 0) {
          const batch = this.#queue.splice(0, this.options.batchSize);
          this.counts.queued = this.#queue.length;
          try {
            await this.options.write(batch);
            this.counts.recorded += batch.length;
          } catch (error) {
            this.counts.dropped += batch.length;
            this.options.warn(`request log: a batch of ${batch.length} entries could not be written (${error instanceof Error ? error.message : String(error)}): dropped`);
          }
        }
      } finally {
        this.#writing = undefined;
      }
    })();
    return this.#writing;
  }
}
