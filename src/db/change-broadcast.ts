import { createHash, randomUUID } from 'node:crypto';
import type { PostgresNotifier } from './notifier.js';
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

  flush(topic: BroadcastTopic): void {
    for (const subscriber of this.#byTopic.get(topic) ?? []) subscriber.flush();
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
  /** The instance's LISTEN connection (the database's). */
  notifier: PostgresNotifier;
  schema: string;
  log?: (message: string, details: Record<string, unknown>) => void;
  /** False for a process that only tells (the CLI): no LISTEN connection. */
  listen?: boolean;
}

/**
 * NOTIFY through the pool (its timeouts apply); LISTEN on the instance's notifier
 * (notifier.ts), whose every (re)connection flushes every subscriber, since whatever was sent
 * while it was away is lost. Messages carry the sender's id, so an instance skips its own.
 */
class PostgresBroadcast implements ChangeBroadcast {
  readonly #subscribers = new Subscribers();
  readonly #coalescer = new Coalescer();
  readonly #origin = randomUUID().slice(0, 8);
  readonly #stops: (() => void)[] = [];
  #closed = false;
  readonly #sending = new Set<Promise<void>>();

  constructor(private readonly options: PostgresBroadcastOptions) {
    if (options.listen === false) return;
    for (const topic of BROADCAST_TOPICS) {
      this.#stops.push(
        options.notifier.subscribe(broadcastChannel(topic, options.schema), {
          message: (raw) => this.#received(topic, raw),
          missed: () => this.#subscribers.flush(topic),
        }),
      );
    }
    if (options.log) this.#stops.push(options.notifier.logTo(options.log));
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

  #received(topic: BroadcastTopic, raw: string): void {
    const separator = raw.indexOf('|');
    if (separator < 0 || raw.slice(0, separator) === this.#origin) return;
    this.#subscribers.deliver(topic, raw.slice(separator + 1));
  }

  /** Waits for messages being sent (a CLI revocation must reach the instances before the pool closes); the notifier is the database's to close. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#sending);
    for (const stop of this.#stops) stop();
  }
}

/**
 * PostgreSQL when the database is (over its notifier), this process's apps on the same file
 * otherwise. `listen: false` (the CLI) only tells: on SQLite that reaches no other process,
 * whose caches then catch up within their TTL.
 */
export function openChangeBroadcast(database: Database, options: { log?: PostgresBroadcastOptions['log']; listen?: boolean }): ChangeBroadcast {
  if (database.notifier) {
    return new PostgresBroadcast({ db: database.db, notifier: database.notifier, schema: database.schema ?? 'public', listen: options.listen ?? true, ...(options.log ? { log: options.log } : {}) });
  }
  return options.listen === false ? NO_BROADCAST : new LocalBroadcast(database.location);
}

/** For code run without an app (the CLI): nothing to tell anyone. */
export const NO_BROADCAST: ChangeBroadcast = {
  publish: async () => undefined,
  subscribe: () => () => undefined,
  close: async () => undefined,
};
