import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { postgresDriver } from './postgres-driver.js';
import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';
import type { DB } from './schema.js';

/**
 * What instances tell each other: catalogue changes (their read caches) and credential
 * revocations (their credential caches). Never one message per order (decisions.md, issue 20).
 */
export const BROADCAST_TOPICS = ['catalogue', 'credentials'] as const;
export type BroadcastTopic = (typeof BROADCAST_TOPICS)[number];

export interface BroadcastSubscriber {
  /** Another instance's message (its payload, '' when none). The sender acted on its own already. */
  message(payload: string): void;
  /** Messages may have been missed (the listener connected or reconnected): drop everything cached. */
  flush(): void;
}

/**
 * Cache invalidations across the instances sharing one database: PostgreSQL LISTEN/NOTIFY,
 * or, on SQLite (one instance), the apps of this process on the same file.
 */
export interface ChangeBroadcast {
  /** Sent after the change committed; best effort (never throws): every cache keeps its TTL as the bound. */
  publish(topic: BroadcastTopic, payload?: string): Promise<void>;
  subscribe(topic: BroadcastTopic, subscriber: BroadcastSubscriber): () => void;
  close(): Promise<void>;
}

/** A NOTIFY payload is at most 8000 bytes; ours are a few dozen. */
const MAX_PAYLOAD_CHARS = 4000;
const CONNECT_TIMEOUT_MS = 5_000;
const QUERY_TIMEOUT_MS = 5_000;
/**
 * The LISTEN connection is checked this often (by LISTENing again, a no-op): a black-holed
 * connection sends no 'end', and keepalive alone takes minutes to notice.
 */
const CHECK_EVERY_MS = 10_000;
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 5_000;

/** Per topic and schema (test schemas stay apart), within PostgreSQL's 63 characters. */
export function broadcastChannel(topic: BroadcastTopic, schema: string): string {
  return `fr_bc_${topic}_${createHash('md5').update(schema).digest('hex').slice(0, 16)}`;
}

class Subscribers {
  readonly #byTopic = new Map<BroadcastTopic, Set<BroadcastSubscriber>>();

  add(topic: BroadcastTopic, subscriber: BroadcastSubscriber): () => void {
    const set = this.#byTopic.get(topic) ?? new Set();
    this.#byTopic.set(topic, set);
    set.add(subscriber);
    return () => set.delete(subscriber);
  }

  deliver(topic: BroadcastTopic, payload: string): void {
    for (const subscriber of this.#byTopic.get(topic) ?? []) subscriber.message(payload);
  }

  flush(): void {
    for (const set of this.#byTopic.values()) for (const subscriber of set) subscriber.flush();
  }
}

/**
 * Payload-less messages (the catalogue's "something changed") are coalesced: while one is
 * being sent, any number of further ones become a single one sent after it, which each of
 * their callers awaits.
 */
class Coalescer {
  readonly #sending = new Map<string, Promise<void>>();
  readonly #queued = new Map<string, Promise<void>>();

  run(key: string, send: () => Promise<void>): Promise<void> {
    const inFlight = this.#sending.get(key);
    if (inFlight) {
      let queued = this.#queued.get(key);
      if (!queued) {
        queued = inFlight.then(() => {
          this.#queued.delete(key);
          return this.run(key, send);
        });
        this.#queued.set(key, queued);
      }
      return queued;
    }
    const sending = send().finally(() => this.#sending.delete(key));
    this.#sending.set(key, sending);
    return sending;
  }
}

/** The apps of this process on one SQLite file, by file: SQLite serves one instance, so this is all of them. */
const localHubs = new Map<string, Set<LocalBroadcast>>();

class LocalBroadcast implements ChangeBroadcast {
  readonly #subscribers = new Subscribers();

  constructor(private readonly location: string) {
    const hub = localHubs.get(location) ?? new Set();
    localHubs.set(location, hub);
    hub.add(this);
  }

  async publish(topic: BroadcastTopic, payload = ''): Promise<void> {
    for (const other of localHubs.get(this.location) ?? []) {
      // Asynchronous, as a notification from the database would be.
      if (other !== this) setImmediate(() => other.#subscribers.deliver(topic, payload));
    }
  }

  subscribe(topic: BroadcastTopic, subscriber: BroadcastSubscriber): () => void {
    return this.#subscribers.add(topic, subscriber);
  }

  async close(): Promise<void> {
    const hub = localHubs.get(this.location);
    hub?.delete(this);
    if (hub?.size === 0) localHubs.delete(this.location);
  }
}

export interface PostgresBroadcastOptions {
  db: Kysely<DB>;
  url: string;
  schema: string;
  log?: (message: string, details: Record<string, unknown>) => void;
  /** False for a process that only tells (the CLI): no LISTEN connection. */
  listen?: boolean;
}

/**
 * NOTIFY through the pool (its timeouts apply); LISTEN on one dedicated connection, which
 * reconnects after any failure (200 ms, doubling to 5 s) and then flushes every subscriber,
 * since whatever was sent while it was away is lost. Messages carry the sender's id, so an
 * instance skips its own.
 */
class PostgresBroadcast implements ChangeBroadcast {
  readonly #subscribers = new Subscribers();
  readonly #coalescer = new Coalescer();
  readonly #origin = randomUUID().slice(0, 8);
  readonly #channels: Map<string, BroadcastTopic>;
  #client: pg.Client | undefined;
  #retryMs = FIRST_RETRY_MS;
  #retry: NodeJS.Timeout | undefined;
  #check: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #sending = new Set<Promise<void>>();

  constructor(private readonly options: PostgresBroadcastOptions) {
    this.#channels = new Map(BROADCAST_TOPICS.map((topic) => [broadcastChannel(topic, options.schema), topic]));
    if (options.listen !== false) this.#connect();
  }

  publish(topic: BroadcastTopic, given = ''): Promise<void> {
    // After close the pool may be gone: other instances catch up within their cache TTL.
    if (this.#closed) return Promise.resolve();
    const sending = this.#publish(topic, given);
    this.#sending.add(sending);
    return sending.finally(() => this.#sending.delete(sending));
  }

  #publish(topic: BroadcastTopic, given: string): Promise<void> {
    // Too long for a NOTIFY: an empty payload, which subscribers take as "drop everything".
    const payload = given.length > MAX_PAYLOAD_CHARS ? '' : given;
    const send = () =>
      sql`select pg_notify(${broadcastChannel(topic, this.options.schema)}, ${`${this.#origin}|${payload}`})`
        .execute(this.options.db)
        .then(
          () => undefined,
          (err: unknown) => this.options.log?.('change broadcast: NOTIFY failed; other instances catch up within their cache TTL', { err, topic }),
        );
    return payload === '' ? this.#coalescer.run(topic, send) : send();
  }

  subscribe(topic: BroadcastTopic, subscriber: BroadcastSubscriber): () => void {
    return this.#subscribers.add(topic, subscriber);
  }

  #connect(): void {
    if (this.#closed) return;
    const client = new (postgresDriver().Client)({
      connectionString: this.options.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
      application_name: 'fromagerie-change-broadcast',
    });
    this.#client = client;
    client.on('notification', (message) => this.#received(message.channel, message.payload ?? ''));
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    client
      .connect()
      .then(() => this.#listen(client))
      .then(() => {
        if (this.#client !== client) return;
        this.#retryMs = FIRST_RETRY_MS;
        // Whatever was sent before this LISTEN (or while the last connection was down) is lost.
        this.#subscribers.flush();
        this.#check = setInterval(() => void this.#listen(client).catch(() => this.#lost(client)), CHECK_EVERY_MS);
        this.#check.unref();
      })
      .catch(() => this.#lost(client));
  }

  async #listen(client: pg.Client): Promise<void> {
    for (const channel of this.#channels.keys()) await client.query(`LISTEN "${channel}"`);
  }

  #received(channel: string, raw: string): void {
    const topic = this.#channels.get(channel);
    const separator = raw.indexOf('|');
    if (!topic || separator < 0 || raw.slice(0, separator) === this.#origin) return;
    this.#subscribers.deliver(topic, raw.slice(separator + 1));
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearInterval(this.#check);
    void client.end().catch(() => {});
    if (this.#closed) return;
    this.options.log?.('change broadcast: LISTEN connection lost; reconnecting', { retryMs: this.#retryMs });
    this.#retry = setTimeout(() => this.#connect(), this.#retryMs);
    this.#retry.unref();
    this.#retryMs = Math.min(MAX_RETRY_MS, this.#retryMs * 2);
  }

  /** Waits for messages being sent (a CLI revocation must reach the instances before the pool closes). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#sending);
    clearTimeout(this.#retry);
    clearInterval(this.#check);
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.end().catch(() => {});
  }
}

/**
 * PostgreSQL when the database is (its URL given), this process's apps on the same file
 * otherwise. `listen: false` (the CLI) only tells: on SQLite that reaches no other process,
 * whose caches then catch up within their TTL.
 */
export function openChangeBroadcast(database: Database, options: { url: string | undefined; log?: PostgresBroadcastOptions['log']; listen?: boolean }): ChangeBroadcast {
  if (database.dialect === 'postgres' && options.url) {
    return new PostgresBroadcast({ db: database.db, url: options.url, schema: database.schema ?? 'public', listen: options.listen ?? true, ...(options.log ? { log: options.log } : {}) });
  }
  return options.listen === false ? NO_BROADCAST : new LocalBroadcast(database.location);
}

/** For code run without an app (the CLI): nothing to tell anyone. */
export const NO_BROADCAST: ChangeBroadcast = {
  publish: async () => undefined,
  subscribe: () => () => undefined,
  close: async () => undefined,
};
