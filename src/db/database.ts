import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type pg from 'pg';
import { postgresDriver } from './postgres-driver.js';
import { nameStatements } from './named-statements.js';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { DB } from './schema.js';
import { GroupCommitSqliteDialect } from './sqlite-driver.js';
import { CommitListeners, PostgresCommitSignal, SignallingPostgresDialect } from './commit-signal.js';
import { PostgresNotifier } from './notifier.js';
import { tracedDialect } from './traced-driver.js';
import type { Tracing } from '../kernel/tracing.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: DialectName;
  /** The PostgreSQL schema, when one was chosen. */
  schema: string | undefined;
  /** Human-readable location for logs (never includes credentials). */
  location: string;
  /** Where another connection finds it (openWriterDatabase). */
  reach: DatabaseLocation;
  ping(): Promise<void>;
  /**
   * Calls `listener` soon after a transaction that inserted into `table` commits: on this
   * instance with SQLite, on any instance with PostgreSQL (at once on the writer, within 100 ms elsewhere: commit-signal.ts).
   * Best effort, so listeners keep a slow poll as well. Returns the unsubscribe function.
   */
  afterCommitOf(table: string, listener: () => void): () => void;
  /**
   * A connection of this instance outside this Database (the request log's writer thread,
   * openWriterDatabase) committed inserts into `table`: its listeners, and on PostgreSQL the
   * other instances, are told as after a commit of our own.
   */
  committedElsewhere(table: string): void;
  /** PostgreSQL's one LISTEN connection of this instance (notifier.ts); undefined on SQLite. */
  notifier?: PostgresNotifier;
  close(): Promise<void>;
  /** PostgreSQL's connection pool, for the metrics; undefined on SQLite (one connection, no pool). */
  pool?: { stats(): PoolStats; onAcquired(listener: (waitSeconds: number) => void): () => void };
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** Named prepared statements on PostgreSQL (named-statements.ts); on unless false. */
  preparedStatements?: boolean;
  /** Tracing on: a span per statement (traced-driver.ts). */
  tracer?: Tracing | undefined;
}

const INT8_OID = 20;

export function openDatabase(options: DatabaseOptions): Database {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openSqlite(options.dataDir, options.tracer);
}

function openSqlite(dataDir: string, tracer: Tracing | undefined): Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'fromagerie.sqlite');
  ownerOnly(file);
  const connection = sqliteConnection(file);
  const commits = new CommitListeners();
  const db = new Kysely<DB>({ dialect: tracedDialect(new GroupCommitSqliteDialect(connection, commits), tracer, 'sqlite') });
  return {
    db,
    dialect: 'sqlite',
    schema: undefined,
    location: file,
    reach: { dataDir },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    afterCommitOf: (table, listener) => commits.add(table, listener),
    committedElsewhere: (table) => commits.fire(table),
    close: once(() => db.destroy()),
  };
}

/** The database file and its journals hold password hashes and personal data: owner only. */
const PRIVATE_MODE = 0o600;

/**
 * Creates the database file 0600 before SQLite opens it (SQLite would create it 0644 under the
 * usual umask 022), and tightens one an earlier version left wider. SQLite gives the -wal and
 * -shm files its database file's mode when it creates them; ones already there are tightened too.
 */
function ownerOnly(file: string): void {
  fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_WRONLY, PRIVATE_MODE));
  for (const name of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      if ((fs.statSync(name).mode & 0o777) !== PRIVATE_MODE) fs.chmodSync(name, PRIVATE_MODE);
    } catch (error) {
      // Gone meanwhile, or another user's file (the operator's arrangement, left as it is).
      if (!['ENOENT', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
  }
}

/** Closing twice (shutdown racing a failed start, say) must not throw. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

const CONNECT_TIMEOUT_MS = 5_000;
/** Longer than any query we run (migrations included), short enough that nothing waits forever. */
const QUERY_TIMEOUT_MS = 60_000;

/** Every connection this process makes to the file, the app's and the request log writer's alike. */
function sqliteConnection(file: string): SQLite.Database {
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  return connection;
}

/** Every pool this process opens on the server, the app's and the request log writer's alike. */
function postgresPool(url: string, options: Pick<DatabaseOptions, 'poolSize' | 'databaseSchema' | 'preparedStatements'>): pg.Pool {
  const driver = postgresDriver();
  const pool = new driver.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // A stopped or unreachable server must not hang a request forever (decisions.md, "Timeouts").
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    // ids and counts are int8; every value we store fits in a JS number.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : driver.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
    options: [`-c statement_timeout=${QUERY_TIMEOUT_MS}`, `-c idle_in_transaction_session_timeout=${QUERY_TIMEOUT_MS}`, ...(options.databaseSchema ? [`-c search_path=${options.databaseSchema}`] : [])].join(' '),
  });
  // A client losing its connection (PostgreSQL stopped or restarted) must never crash the
  // process. pg emits 'error' on the client: the pool listens only while the client is idle,
  // so a client checked out (a transaction in progress, the bootstrap lock) needs a listener
  // of its own, or the event is an uncaught exception. The query in progress fails with the
  // same error (its request answers 503); the pool drops the broken client when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    if (options.preparedStatements !== false) nameStatements(client);
  });
  return pool;
}

function openPostgres(url: string, options: DatabaseOptions): Database {
  const parsed = new URL(url);
  const pool = postgresPool(url, options);
  // Every wait for a connection is timed (metrics), whether it got one or timed out.
  const acquired = new Set<(waitSeconds: number) => void>();
  const timedPool = {
    connect: async () => {
      const started = performance.now();
      try {
        return await pool.connect();
      } finally {
        for (const listener of acquired) listener((performance.now() - started) / 1000);
      }
    },
    end: () => pool.end(),
  };
  const notifier = new PostgresNotifier({ url, schema: options.databaseSchema ?? 'public' });
  const signal = new PostgresCommitSignal(notifier, options.databaseSchema ?? 'public');
  const db = new Kysely<DB>({ dialect: tracedDialect(new SignallingPostgresDialect({ pool: timedPool }, signal), options.tracer, 'postgresql') });
  return {
    db,
    dialect: 'postgres',
    schema: options.databaseSchema,
    reach: { dataDir: options.dataDir, databaseUrl: url, databaseSchema: options.databaseSchema },
    location: `postgres://${parsed.host}${parsed.pathname}${options.databaseSchema ? `#${options.databaseSchema}` : ''}`,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    afterCommitOf: (table, listener) => signal.watch(table, listener),
    committedElsewhere: (table) => signal.committed(new Set([table])),
    notifier,
    pool: {
      stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max }),
      onAcquired: (listener) => {
        acquired.add(listener);
        return () => acquired.delete(listener);
      },
    },
    close: once(async () => {
      signal.close();
      await notifier.close();
      await db.destroy();
    }),
  };
}

/** Where a second connection of this instance finds the database: plain data, so a worker thread can be given it. */
export interface DatabaseLocation {
  dataDir: string;
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
}

/**
 * One more connection to the app's database, set up as the app's own (pragmas, timeouts, search
 * path), for a worker thread that writes beside the app (the request log's writer). It tells no
 * listener of its commits: its owner calls Database.committedElsewhere on the app's side.
 */
export function openWriterDatabase(location: DatabaseLocation): { db: Kysely<DB>; close(): Promise<void> } {
  if (location.databaseUrl) {
    const pool = postgresPool(location.databaseUrl, { poolSize: 1, databaseSchema: location.databaseSchema });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, close: once(() => db.destroy()) };
  }
  const connection = sqliteConnection(path.join(location.dataDir, 'fromagerie.sqlite'));
  const db = new Kysely<DB>({ dialect: new GroupCommitSqliteDialect(connection, new CommitListeners()) });
  return { db, close: once(() => db.destroy()) };
}
