import { createHash } from 'node:crypto';
import type { PostgresNotifier } from './notifier.js';
import { PostgresDialect, type CompiledQuery, type DatabaseConnection, type DatabaseIntrospector, type Driver, type Kysely, type PostgresDialectConfig, type QueryResult, type TransactionSettings } from 'kysely';
import { SchemaScopedPostgresIntrospector } from './postgres-introspector.js';

/**
 * The NOTIFY channel for inserts into `table` in `schema`: per schema, so test schemas stay
 * apart; the schema hashed, so the name stays within PostgreSQL's 63 characters.
 */
export function insertChannel(table: string, schema: string): string {
  return `fr_${table}_${createHash('md5').update(schema).digest('hex')}`;
}

/**
 * Tables whose committed inserts wake listeners on every instance: the outbox (the webhook
 * dispatchers, held event-log polls) and the request log (held tails). An instance that does not watch one itself (ROLE=api) still announces it.
 */
export const ANNOUNCED_TABLES: ReadonlySet<string> = new Set(['outbox', 'request_logs']);

/**
 * At most one NOTIFY per table per this many ms per instance (issue 20): a NOTIFY inside the
 * writer's transaction takes PostgreSQL's global notify lock at every commit, measured to cost
 * about half of its commit throughput. Other instances hear of an insert within this delay;
 * the writer's own listeners are woken at once, and every listener keeps its slow poll.
 */
export const NOTIFY_INTERVAL_MS = 100;

type Listener = () => void;

/** Listeners per table, fired after a commit that inserted into it. */
export class CommitListeners {
  readonly #listeners = new Map<string, Set<Listener>>();

  add(table: string, listener: Listener): () => void {
    const set = this.#listeners.get(table) ?? new Set();
    set.add(listener);
    this.#listeners.set(table, set);
    return () => set.delete(listener);
  }

  fire(table: string): void {
    for (const listener of this.#listeners.get(table) ?? []) queueMicrotask(listener);
  }

  tables(): string[] {
    return [...this.#listeners.keys()];
  }
}

/**
 * Commit signals across the instances on one PostgreSQL database, over the instance's notifier
 * (notifier.ts): its LISTEN connection hears the other instances' commits, and each of its
 * (re)connections wakes every listener, since anything committed meanwhile is found by a wake.
 */
export class PostgresCommitSignal {
  readonly listeners = new CommitListeners();
  readonly #subscribed = new Set<string>();
  #closed = false;
  /** Per table: the coalescing window's timer, and whether a commit came in during it. */
  readonly #windows = new Map<string, { timer: NodeJS.Timeout; again: boolean }>();

  constructor(
    private readonly notifier: PostgresNotifier,
    private readonly schema: string,
  ) {}

  /**
   * A transaction of this instance committed inserts into `tables`: this instance's listeners
   * now, the other instances by one NOTIFY per table per NOTIFY_INTERVAL_MS, sent on the
   * notifier's connection outside any transaction (lost while it is down: the polls cover it).
   * An instance that watches nothing (ROLE=api) opens that connection to announce.
   */
  committed(tables: ReadonlySet<string>): void {
    for (const table of tables) {
      this.listeners.fire(table);
      if (!ANNOUNCED_TABLES.has(table)) continue;
      const window = this.#windows.get(table);
      if (window) window.again = true;
      else this.#announce(table);
    }
  }

  #announce(table: string): void {
    this.notifier.notify(insertChannel(table, this.schema), '');
    const timer = setTimeout(() => {
      const again = this.#windows.get(table)?.again;
      this.#windows.delete(table);
      if (again && !this.#closed) this.#announce(table);
    }, NOTIFY_INTERVAL_MS);
    timer.unref();
    this.#windows.set(table, { timer, again: false });
  }

  watch(table: string, listener: Listener): () => void {
    const unsubscribe = this.listeners.add(table, listener);
    if (!this.#subscribed.has(table)) {
      this.#subscribed.add(table);
      this.notifier.subscribe(insertChannel(table, this.schema), {
        // Our own announcement: this instance's listeners were woken at its commit.
        message: (_payload, own) => {
          if (!own) this.listeners.fire(table);
        },
        missed: () => this.listeners.fire(table),
      });
    }
    return unsubscribe;
  }

  /** The notifier is closed by its owner (the database). */
  close(): void {
    this.#closed = true;
    for (const window of this.#windows.values()) clearTimeout(window.timer);
  }
}

/**
 * PostgreSQL's dialect, its transactions noting which tables they insert into (announced ones
 * and locally watched ones) and telling the commit signal after COMMIT: no statement added to
 * the writer's transaction, as SQLite's driver does (sqlite-driver.ts).
 */
export class SignallingPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly signal: PostgresCommitSignal,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new SignallingDriver(super.createDriver(), this.signal);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaScopedPostgresIntrospector(db);
  }
}

/** Kysely compiles an insert (alone or in a CTE) as `insert into "table"`; the search path names the schema. */
const INSERT_INTO = /insert into "([a-z_]+)"/g;

class NotingConnection implements DatabaseConnection {
  /** The tables this transaction inserted into, while one is open. */
  inserted: Set<string> | undefined;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly signal: PostgresCommitSignal,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inserted && query.sql.includes('insert into')) {
      for (const [, table] of query.sql.matchAll(INSERT_INTO)) if (ANNOUNCED_TABLES.has(table!) || this.signal.listeners.tables().includes(table!)) this.inserted.add(table!);
    }
    return this.inner.executeQuery(query);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery(query, chunkSize);
  }
}

class SignallingDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly signal: PostgresCommitSignal,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new NotingConnection(await this.inner.acquireConnection(), this.signal);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const noting = connection as NotingConnection;
    await this.inner.beginTransaction(noting.inner, settings);
    noting.inserted = new Set();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const noting = connection as NotingConnection;
    const inserted = noting.inserted;
    noting.inserted = undefined;
    await this.inner.commitTransaction(noting.inner);
    if (inserted && inserted.size > 0) this.signal.committed(inserted);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const noting = connection as NotingConnection;
    noting.inserted = undefined;
    await this.inner.rollbackTransaction(noting.inner);
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    await this.inner.savepoint!((connection as NotingConnection).inner, name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2]): Promise<void> {
    await this.inner.rollbackToSavepoint!((connection as NotingConnection).inner, name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2]): Promise<void> {
    await this.inner.releaseSavepoint!((connection as NotingConnection).inner, name, compile);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const noting = connection as NotingConnection;
    noting.inserted = undefined;
    await this.inner.releaseConnection(noting.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
