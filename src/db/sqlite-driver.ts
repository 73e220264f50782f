import type { Database as SqliteConnection, Statement } from 'better-sqlite3';
import { SelectQueryNode, SqliteDialect, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { CommitListeners } from './commit-signal.js';
import { systemClock } from '../kernel/clock.js';

const MAX_STATEMENTS = 500;
/** A group commits once it holds this many transactions, or has been open this long. */
const MAX_GROUP_SIZE = 64;
const MAX_GROUP_MS = 20;
/** Members run one after another, so one savepoint name serves them all (Kysely's own savepoints nest inside). */
const MEMBER = 'group_member';

/** Open drivers per database file in this process (tests run two instances over one file). */
const connectionsPerFile = new Map<string, number>();

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; SQLite stores booleans as 0/1. */
function bindable(parameters: ReadonlyArray<unknown>): unknown[] {
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

interface Prepared {
  statement: Statement;
  /** The table an INSERT writes to: its commit listeners fire once the rows are committed. */
  insertsInto: string | undefined;
}

/** Transactions that have finished their work and wait for one COMMIT together. */
interface Group {
  openedAt: number;
  members: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
  inserted: Set<string>;
}

/** One use of the connection, from acquire to release: a transaction, or single statements. */
class Lease implements DatabaseConnection {
  savepoint: string | undefined;
  readonly inserted = new Set<string>();
  released = false;

  constructor(private readonly driver: GroupCommitDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return Promise.resolve(this.driver.execute<R>(this, query));
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('SQLite streams only SELECT queries');
    for (const row of this.driver.iterate(this, query)) yield { rows: [row as R] };
  }
}

/**
 * SQLite behind Kysely, with group commit. SQLite has one writer and one connection here, so
 * transactions already run one after another; what each paid for alone was its COMMIT (the
 * pages it touched written to the WAL: ~130 µs of a ~1 ms order placement, see
 * docs/performance.md). Here a transaction runs inside a SAVEPOINT of a shared outer
 * transaction, and the outer one commits when nobody is waiting for the connection, or when it
 * holds MAX_GROUP_SIZE transactions or is MAX_GROUP_MS old. Each transaction's commit promise
 * resolves only after that COMMIT, so nothing is answered before it is durable, and a
 * transaction that fails rolls back to its savepoint, leaving the others whole. A statement
 * outside a transaction first commits the open group, so reads never see uncommitted rows.
 *
 * Also: waiters get the connection first come, first served (Kysely's mutex wakes them all on
 * every release), prepared statements are kept by SQL text (Kysely prepares every query anew:
 * ~19% of a GET's CPU), booleans are bound as 0/1, and commit listeners fire after the COMMIT
 * that made an insert visible.
 */
export class GroupCommitDriver implements Driver {
  /** Least recently used dropped first: the hot statements stay prepared whatever else runs. */
  readonly #statements = new LRUCache<string, Prepared>({ max: MAX_STATEMENTS });
  readonly #waiting: Array<() => void> = [];
  #busy = false;
  #group: Group | undefined;
  #commitScheduled = false;

  constructor(
    private readonly connection: SqliteConnection,
    private readonly commits?: CommitListeners,
  ) {
    connectionsPerFile.set(connection.name, (connectionsPerFile.get(connection.name) ?? 0) + 1);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#busy = true;
    return new Lease(this);
  }

  async beginTransaction(lease: Lease): Promise<void> {
    if (!this.#group) {
      // IMMEDIATE: the write lock is taken here, waiting up to busy_timeout for another process
      // (the CLI beside a server) to commit. A plain (deferred) BEGIN reads first and asks for the
      // lock at its first write: if another process committed meanwhile, that write fails at
      // once with SQLITE_BUSY_SNAPSHOT, which no busy_timeout retries. Read-only transactions
      // take it too: this process has one connection, so its transactions run one at a time
      // and share the group's lock anyway; it only orders them behind another process's writer.
      this.#run('begin immediate');
      this.#group = { openedAt: systemClock.now(), members: [], inserted: new Set() };
    }
    this.#guarded(() => this.#run(`savepoint ${MEMBER}`));
    lease.savepoint = MEMBER;
  }

  async commitTransaction(lease: Lease): Promise<void> {
    const group = this.#group;
    if (!group) throw new Error('The transaction was rolled back by SQLite after an error.');
    this.#guarded(() => this.#run(`release ${MEMBER}`));
    lease.savepoint = undefined;
    for (const table of lease.inserted) group.inserted.add(table);
    const committed = new Promise<void>((resolve, reject) => group.members.push({ resolve, reject }));
    // The connection goes to the next waiter now; this transaction's answer waits for the COMMIT.
    this.#finish(lease);
    return committed;
  }

  async rollbackTransaction(lease: Lease): Promise<void> {
    if (lease.savepoint === undefined) return; // its group's COMMIT failed: nothing of it remains
    lease.savepoint = undefined;
    lease.inserted.clear();
    if (this.#group && this.connection.inTransaction) {
      this.#guarded(() => {
        this.#run(`rollback to ${MEMBER}`);
        this.#run(`release ${MEMBER}`);
      });
    }
  }

  async releaseConnection(lease: Lease): Promise<void> {
    this.#finish(lease);
  }

  async destroy(): Promise<void> {
    if (this.#group) this.#commitGroup();
    connectionsPerFile.set(this.connection.name, (connectionsPerFile.get(this.connection.name) ?? 1) - 1);
    this.connection.close();
  }

  execute<R>(lease: Lease, query: CompiledQuery): QueryResult<R> {
    const prepared = this.#prepare(lease, query.sql);
    const parameters = bindable(query.parameters);
    // INSERT … RETURNING is a reader too.
    const result: QueryResult<R> = prepared.statement.reader
      ? { rows: this.#guarded(() => prepared.statement.all(...parameters)) as R[] }
      : this.#guarded(() => {
          const { changes, lastInsertRowid } = prepared.statement.run(...parameters);
          return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
        });
    if (prepared.insertsInto) {
      if (lease.savepoint !== undefined) lease.inserted.add(prepared.insertsInto);
      else this.commits?.fire(prepared.insertsInto);
    }
    return result;
  }

  iterate(lease: Lease, query: CompiledQuery): IterableIterator<unknown> {
    return this.#prepare(lease, query.sql).statement.iterate(...bindable(query.parameters));
  }

  /** The statement, prepared once per SQL text; outside a transaction, the open group commits first. */
  #prepare(lease: Lease, sql: string): Prepared {
    if (lease.savepoint === undefined && this.#group) this.#commitGroup();
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      prepared = { statement: this.connection.prepare(sql), insertsInto: this.commits && /^insert into "([a-z_]+)"/.exec(sql)?.[1] };
      this.#statements.set(sql, prepared);
    }
    return prepared;
  }

  /**
   * The lease is done with the connection: commit the group if it is full or old, then hand
   * over. With nobody waiting, the COMMIT waits one turn of the event loop (setImmediate): a
   * transaction runs start to end in microtasks, so the requests that arrived meanwhile are
   * read only then, and their transactions join the group.
   */
  #finish(lease: Lease): void {
    if (lease.released) return;
    lease.released = true;
    const group = this.#group;
    if (group && (group.members.length >= MAX_GROUP_SIZE || systemClock.now() - group.openedAt >= MAX_GROUP_MS)) this.#commitGroup();
    const next = this.#waiting.shift();
    if (next) return next();
    this.#busy = false;
    if (!this.#group) return;
    // Another connection of this process to the file would wait for our lock synchronously, on
    // this very thread, while our COMMIT waited for the event loop: commit now instead.
    if ((connectionsPerFile.get(this.connection.name) ?? 0) > 1) this.#commitGroup();
    else this.#commitSoon();
  }

  #commitSoon(): void {
    if (this.#commitScheduled) return;
    this.#commitScheduled = true;
    setImmediate(() => {
      this.#commitScheduled = false;
      // A lease holding the connection commits or hands the group on when it finishes.
      if (this.#group && !this.#busy) this.#commitGroup();
    });
  }

  #commitGroup(): void {
    const group = this.#group!;
    this.#group = undefined;
    try {
      this.#run('commit');
    } catch (error) {
      if (this.connection.inTransaction) this.#run('rollback');
      for (const member of group.members) member.reject(error);
      return;
    }
    for (const member of group.members) member.resolve();
    for (const table of group.inserted) this.commits?.fire(table);
  }

  /**
   * Runs a statement of the open group. Some errors (disk full, I/O) make SQLite roll back the
   * whole transaction: then every transaction waiting in the group has failed, and is told so.
   */
  #guarded<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      const group = this.#group;
      if (group && !this.connection.inTransaction) {
        this.#group = undefined;
        for (const member of group.members) member.reject(error);
      }
      throw error;
    }
  }

  #run(sql: string): void {
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      prepared = { statement: this.connection.prepare(sql), insertsInto: undefined };
      this.#statements.set(sql, prepared);
    }
    prepared.statement.run();
  }
}

/** Kysely's SQLite dialect (compiler, adapter, introspector) on the group-commit driver. */
export class GroupCommitSqliteDialect extends SqliteDialect {
  constructor(
    private readonly connection: SqliteConnection,
    private readonly commits?: CommitListeners,
  ) {
    super({ database: connection });
  }

  override createDriver(): Driver {
    return new GroupCommitDriver(this.connection, this.commits);
  }
}
