import type pg from 'pg';
import { postgresDriver } from './postgres-driver.js';

/**
 * A user of the notifier on one channel: the commit signal (outbox inserts) and the change
 * broadcast (cache invalidations) share the instance's one LISTEN connection (issue 29).
 */
export interface NotifierSubscriber {
  /** A NOTIFY on the channel; `own` when it was sent on this very connection (this instance). */
  message(payload: string, own: boolean): void;
  /** The connection (re)connected and LISTENs again: whatever was sent while it was away is lost. */
  missed(): void;
}

export interface NotifierOptions {
  url: string;
  schema: string;
}

const CONNECT_TIMEOUT_MS = 5_000;
/** Every query on the connection (LISTEN, NOTIFY, the liveness check): a stopped server never hangs a call. */
const QUERY_TIMEOUT_MS = 5_000;
/** Closing waits at most this long for the server to say goodbye. */
const END_TIMEOUT_MS = 1_000;
/**
 * The connection is checked this often: a black-holed connection sends no 'end', and keepalive
 * alone takes minutes to notice.
 */
const CHECK_EVERY_MS = 10_000;
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 5_000;

/** The jittered wait before the next attempt: between half and all of `retryMs`, so instances cut off together do not return together. */
export function retryDelay(retryMs: number, random: () => number = Math.random): number {
  return Math.round(retryMs / 2 + (random() * retryMs) / 2);
}

/**
 * The instance's one LISTEN connection on PostgreSQL (application_name
 * `fromagerie-notifier/<schema>`). It connects when first needed (a subscription, or a NOTIFY
 * of an instance that subscribes to nothing), reconnects after any failure (200 ms doubling to
 * 5 s, jittered), checks itself every 10 s, and after each (re)connection LISTENs again and
 * tells every subscriber that messages may have been missed. Subscribers keep their own safety
 * net (polls, cache TTLs) for the time it is down.
 */
export class PostgresNotifier {
  readonly #subscribers = new Map<string, Set<NotifierSubscriber>>();
  readonly #logs = new Set<(message: string, details: Record<string, unknown>) => void>();
  #client: pg.Client | undefined;
  #retryMs = FIRST_RETRY_MS;
  #retry: NodeJS.Timeout | undefined;
  #check: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(private readonly options: NotifierOptions) {}

  get applicationName(): string {
    return `fromagerie-notifier/${this.options.schema}`.slice(0, 63);
  }

  subscribe(channel: string, subscriber: NotifierSubscriber): () => void {
    const set = this.#subscribers.get(channel) ?? new Set();
    const first = set.size === 0;
    this.#subscribers.set(channel, set);
    set.add(subscriber);
    if (!this.#client) this.#connect();
    // A connection still connecting LISTENs to every channel once it is up.
    else if (first) void this.#client.query(`LISTEN "${channel}"`).catch(() => this.#lost(this.#client));
    return () => set.delete(subscriber);
  }

  /** Best effort, on the LISTEN connection, outside any transaction: lost while it is down (the subscribers' safety nets cover it). */
  notify(channel: string, payload: string): void {
    if (!this.#client) this.#connect();
    const client = this.#client;
    void client?.query('select pg_notify($1, $2)', [channel, payload]).catch(() => this.#lost(client));
  }

  /** Where the connection's troubles are told (the app's log). */
  logTo(log: (message: string, details: Record<string, unknown>) => void): () => void {
    this.#logs.add(log);
    return () => this.#logs.delete(log);
  }

  #connect(): void {
    if (this.#closed || this.#client || this.#retry) return;
    const client = new (postgresDriver().Client)({
      connectionString: this.options.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
      application_name: this.applicationName,
    });
    this.#client = client;
    client.on('notification', (message) => {
      const own = message.processId === (client as pg.Client & { processID?: number }).processID;
      for (const subscriber of this.#subscribers.get(message.channel) ?? []) subscriber.message(message.payload ?? '', own);
    });
    // Every failure is handled here (an 'error' without a listener would crash the process).
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    client
      .connect()
      .then(async () => {
        for (const channel of this.#channels()) await client.query(`LISTEN "${channel}"`);
        if (this.#client !== client) return;
        this.#retryMs = FIRST_RETRY_MS;
        this.#check = setInterval(() => void client.query('select 1').catch(() => this.#lost(client)), CHECK_EVERY_MS);
        this.#check.unref();
        for (const set of this.#subscribers.values()) for (const subscriber of set) subscriber.missed();
      })
      .catch(() => this.#lost(client));
  }

  #channels(): string[] {
    return [...this.#subscribers].filter(([, set]) => set.size > 0).map(([channel]) => channel);
  }

  /** `client`: the one that failed; a late event of a client already replaced is ignored. */
  #lost(client: pg.Client | undefined): void {
    if (!client || client !== this.#client) return;
    this.#client = undefined;
    clearInterval(this.#check);
    void client.end().catch(() => {});
    if (this.#closed) return;
    const delay = retryDelay(this.#retryMs);
    for (const log of this.#logs) log('notifier: LISTEN connection lost; reconnecting', { retryMs: delay });
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#connect();
    }, delay);
    this.#retry.unref();
    this.#retryMs = Math.min(MAX_RETRY_MS, this.#retryMs * 2);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#check);
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, END_TIMEOUT_MS)));
    await Promise.race([client.end().catch(() => {}), timeout]);
    clearTimeout(timer);
  }
}
