import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import { isPostgres } from '../../db/dialect.js';
import { toIso } from '../../db/columns.js';
import { prepared } from '../../db/prepared.js';
import { FirstIdAtOrAfter } from '../../db/first-id.js';
import type { RequestLogEntry } from './request-log.recorder.js';
import { REQUEST_LOG_COLUMNS, type RequestLogTable } from './request-log.table.js';

export type RequestLogRow = Omit<Selectable<RequestLogTable>, 'created_at'> & { created_at: string };

/** One transaction-scoped advisory lock, held by each batch from its first id to its commit. */
const WRITER_LOCK = 0x72657131; // "req1"
/**
 * Rows per INSERT, largest first: a batch of n rows is at most nine INSERTs whose SQL is one of
 * nine texts, so the database keeps them prepared. One INSERT of each batch's own size was
 * prepared anew per size and pushed the hot statements out of SQLite's statement cache; one
 * row per statement held the one SQLite connection across hundreds of awaits. Either cost the
 * requests 40% of their throughput (docs/performance.md).
 */
const CHUNKS = [256, 128, 64, 32, 16, 8, 4, 2, 1];

/** Every column an entry sets (the id is the database's). */
const ENTRY_COLUMNS = (Object.keys(REQUEST_LOG_COLUMNS) as Array<keyof RequestLogTable>).filter((column): column is Exclude<keyof RequestLogTable, 'id'> => column !== 'id');
type EntryColumns = Record<(typeof ENTRY_COLUMNS)[number], unknown[]>;

/**
 * One INSERT of n rows, compiled by Kysely once per chunk size and dialect (src/db/prepared.ts)
 * and then only bound: compiling a 256-row INSERT (5,000 parameters) anew for each batch was
 * most of what the log cost a request (docs/performance.md). Values arrive column by column,
 * the shape prepared() binds.
 */
const insertChunk = prepared((db, columns: EntryColumns) => {
  const count = columns.request_id.length;
  const rows = Array.from({ length: count }, (_, row) => Object.fromEntries(ENTRY_COLUMNS.map((column) => [column, columns[column][row]])) as RequestLogEntry);
  return db.insertInto('request_logs').values(rows);
});

function columnsOf(entries: RequestLogEntry[]): EntryColumns {
  return Object.fromEntries(ENTRY_COLUMNS.map((column) => [column, entries.map((entry) => entry[column] ?? null)])) as EntryColumns;
}

export interface RequestLogQuery {
  /** Null for staff: every account's. */
  accountId: number | null;
  environment: string;
  status?: { exact: number } | { from: number; below: number };
  method?: string;
  pathPrefix?: string;
  credential?: string;
  idempotencyKey?: string;
  requestId?: string;
  createdGte?: string;
  createdLt?: string;
  order: 'asc' | 'desc';
  /** Strictly past this id in `order`. */
  from?: number;
  limit: number;
}

/** Requests of one hour (`2026-11-29T04`, UTC) and status class (2 for 2xx…). */
export interface HourlyCount {
  hour: string;
  statusClass: number;
  count: number;
}

/**
 * How far out of arrival order an entry's time may be (instances batch for 100 ms; their clocks
 * agree to the second): the time window's first id is looked for this much earlier.
 */
const ARRIVAL_SLACK_MS = 60_000;

const fromRow = (row: Selectable<RequestLogTable>): RequestLogRow => ({ ...row, id: Number(row.id), account_id: Number(row.account_id), status: Number(row.status), duration_ms: Number(row.duration_ms), created_at: toIso(row.created_at) });

/**
 * The request log's SQL. Ids are in commit order on both dialects, so a reader moving forward
 * by id never skips an entry that commits late: SQLite has one writer, and on PostgreSQL each
 * batch takes its ids under an advisory lock held until it commits, so no batch can take
 * lower ids than one already visible.
 */
export class RequestLogRepository {
  constructor(private readonly db: Kysely<DB>) {
    this.#firstIds = new FirstIdAtOrAfter(db, 'request_logs');
  }

  async insertBatch(entries: RequestLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(${WRITER_LOCK})`.execute(trx);
      let from = 0;
      for (const size of CHUNKS) {
        while (entries.length - from >= size) {
          await insertChunk(trx, columnsOf(entries.slice(from, from + size)));
          from += size;
        }
      }
    });
  }

  async page(query: RequestLogQuery): Promise<RequestLogRow[]> {
    let select = this.db.selectFrom('request_logs').selectAll().where('environment', '=', query.environment);
    if (query.accountId !== null) select = select.where('account_id', '=', query.accountId);
    const { status } = query;
    if (status && 'exact' in status) select = select.where('status', '=', status.exact);
    else if (status) select = select.where('status', '>=', status.from).where('status', '<', status.below);
    if (query.method) select = select.where('method', '=', query.method);
    if (query.pathPrefix) select = select.where(sql<string>`substr(path, 1, ${query.pathPrefix.length})`, '=', query.pathPrefix);
    if (query.credential) {
      const credential = query.credential;
      select = select.where((eb) => eb.or([eb('credential_label', '=', credential), eb('credential_kind', '=', credential)]));
    }
    if (query.idempotencyKey) select = select.where('idempotency_key', '=', query.idempotencyKey);
    if (query.requestId) select = select.where('request_id', '=', query.requestId);
    if (query.createdGte) select = select.where('created_at', '>=', query.createdGte);
    if (query.createdLt) select = select.where('created_at', '<', query.createdLt);
    if (query.from !== undefined) select = select.where('id', query.order === 'asc' ? '>' : '<', query.from);
    const rows = await select.orderBy('id', query.order).limit(query.limit).execute();
    return rows.map(fromRow);
  }

  /** The newest entry of a request id the caller may see (a client's own X-Request-Id may repeat). */
  async byRequestId(requestId: string, accountId: number | null, environment: string): Promise<RequestLogRow | undefined> {
    let select = this.db.selectFrom('request_logs').selectAll().where('request_id', '=', requestId).where('environment', '=', environment);
    if (accountId !== null) select = select.where('account_id', '=', accountId);
    const row = await select.orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row && fromRow(row);
  }

  /**
   * Entries of [from, to) counted per hour and status class, for one account or every account
   * (null), in one environment. There is no index on the time (every index costs every request):
   * ids follow arrival, so the window's first id is found by bisecting the primary key, and the
   * count reads from there on (the account's (account_id, id) index, or the key itself).
   */
  async hourlyCounts(accountId: number | null, environment: string, from: string, to: string): Promise<HourlyCount[]> {
    const firstId = await this.#firstIds.find(new Date(Date.parse(from) - ARRIVAL_SLACK_MS).toISOString());
    if (firstId === null) return [];
    const hour = isPostgres(this.db) ? sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24')` : sql<string>`substr(created_at, 1, 13)`;
    let select = this.db
      .selectFrom('request_logs')
      .select([hour.as('hour'), sql<number>`status / 100`.as('status_class'), (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('id', '>=', firstId)
      .where('environment', '=', environment)
      .where('created_at', '>=', from)
      .where('created_at', '<', to);
    if (accountId !== null) select = select.where('account_id', '=', accountId);
    const rows = await select.groupBy([hour, sql`status / 100`]).execute();
    return rows.map((row) => ({ hour: row.hour, statusClass: Number(row.status_class), count: Number(row.n) }));
  }

  /** The window's first id, bisected on the ids (src/db/first-id.ts): no index on created_at. */
  readonly #firstIds: FirstIdAtOrAfter;

  /** The last id written (0 when the log is empty). */
  async head(): Promise<number> {
    const row = await this.db.selectFrom('request_logs').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  /** Who and where the entries past `from` are: what the watcher wakes held tails by. */
  async beyond(from: number, limit: number): Promise<Array<{ id: number; accountId: number; environment: string }>> {
    const rows = await this.db.selectFrom('request_logs').select(['id', 'account_id', 'environment']).where('id', '>', from).orderBy('id').limit(limit).execute();
    return rows.map((row) => ({ id: Number(row.id), accountId: Number(row.account_id), environment: row.environment }));
  }

  /**
   * Entries older than `before`, oldest first in slices of `slice` ids (the primary key: there
   * is no index on the time, and ids follow arrival), until a slice holds a younger one.
   */
  async prune(before: string, slice = 5000): Promise<number> {
    let total = 0;
    for (;;) {
      const oldest = this.db.selectFrom('request_logs').select('id').orderBy('id').limit(slice);
      const result = await this.db.deleteFrom('request_logs').where('id', 'in', oldest).where('created_at', '<', before).executeTakeFirst();
      const deleted = Number(result.numDeletedRows);
      total += deleted;
      if (deleted < slice) return total;
    }
  }
}
