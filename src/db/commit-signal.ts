import { createHash } from 'node:crypto';
import pg from 'pg';
import { sql, type Transaction } from 'kysely';
import { isPostgres } from './dialect.js';
import type { DB } from './schema.js';

/**
 * The NOTIFY channel for inserts into `table` in `schema`: per schema, so test schemas stay
 * apart; the schema hashed, so the name stays within PostgreSQL's 63 characters.
 */
export function insertChannel(table: string, schema: string): string {
  return `fr_${table}_${createHash('md5').update(schema).digest('hex')}`;
}

/**
 * Announces, inside the writer's transaction, that it inserted into `table`. PostgreSQL
 * delivers the NOTIFY only if and when the transaction commits, to every instance listening
 * (see `PostgresCommitSignal`). SQLite needs nothing: its driver sees the commit itself.
 */
export async function announceInsert(trx: Transaction<DB>, table: keyof DB): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`select pg_notify(cast(${`fr_${table}_`} as text) || md5(current_schema()), '')`.execute(trx);
}

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
 * One dedicated connection LISTENing for every instance's commits. It reconnects after a
 * failure; while it is down, the listeners' own polling is the safety net.
 */
export class PostgresCommitSignal {
  readonly listeners = new CommitListeners();
  #client: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: { url: string; schema: string; log?: (message: string) => void }) {}

  watch(table: string, listener: Listener): () => void {
    const unsubscribe = this.listeners.add(table, listener);
    if (this.#client) void this.#client.query(`LISTEN "${insertChannel(table, this.options.schema)}"`).catch(() => this.#reconnect());
    else this.#connect();
    return unsubscribe;
  }

  #connect(): void {
    if (this.#closed || this.#client) return;
    const client = new pg.Client({ connectionString: this.options.url, connectionTimeoutMillis: 5000, keepAlive: true });
    this.#client = client;
    client.on('notification', (message) => {
      const table = this.listeners.tables().find((t) => insertChannel(t, this.options.schema) === message.channel);
      if (table) this.listeners.fire(table);
    });
    client.on('error', () => this.#reconnect());
    client.on('end', () => this.#reconnect());
    client
      .connect()
      .then(async () => {
        for (const table of this.listeners.tables()) await client.query(`LISTEN "${insertChannel(table, this.options.schema)}"`);
        // Anything committed while we were not listening is found by the first wake.
        for (const table of this.listeners.tables()) this.listeners.fire(table);
      })
      .catch(() => this.#reconnect());
  }

  #reconnect(): void {
    const client = this.#client;
    this.#client = undefined;
    if (client) void client.end().catch(() => {});
    if (this.#closed || this.#retry) return;
    this.options.log?.('commit signal connection lost; reconnecting in 1 s');
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#connect();
    }, 1000);
    this.#retry.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.end().catch(() => {});
  }
}
