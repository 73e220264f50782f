import { ForbiddenError, InvalidRequestError, NotFoundError } from '../../kernel/errors.js';
import type { HeadWatcher } from '../../kernel/head-watcher.js';
import { pollingOrder } from '../../kernel/log-polling.js';
import { rowId, type CursorCodec } from '../../kernel/pagination.js';
import type { Principal } from '../../kernel/principal.js';
import { hasScope } from '../../kernel/scopes.js';
import { ClosedHours, HOUR_MS } from '../../kernel/closed-hours.js';
import type { HourlyCount, RequestLogQuery, RequestLogRepository, RequestLogRow } from './request-log.repository.js';

const CURSOR_KIND = 'request-logs';
const POSITION_KIND = 'request-logs-position';
const POSITION_PREFIX = 'pos_';
export const MAX_WAIT_S = 25;

export interface RequestLogFilters {
  limit: number;
  cursor?: string;
  /** `2xx`…`5xx`, or one status (`404`). */
  status?: string;
  method?: string;
  path?: string;
  credential?: string;
  idempotencyKey?: string;
  requestId?: string;
  createdGte?: string;
  createdLt?: string;
  order?: 'asc' | 'desc';
  /** `now`, a request id, or the `pos_…` a page gave as `nextAfter`. */
  after?: string;
  waitSeconds?: number;
}

export interface RequestLogPage {
  items: RequestLogRow[];
  hasMore: boolean;
  nextCursor: string | null;
  nextAfter: string | null;
}

/** What the watcher tells apart: whose entry, in which environment. */
export interface LogMark {
  id: number;
  accountId: number;
  environment: string;
}

/**
 * The request log as its readers see it (issue 30): an account's own entries, or every
 * account's for staff, of the credential's environment only; newest first, or forward from a
 * place (`after`), held while nothing is new (`wait`), as the event log is.
 */
export class RequestLogService {
  /** The hourly counts of closed hours, per reader's scope (kernel/closed-hours.ts). */
  readonly #hours = new ClosedHours<HourlyCount[]>();

  constructor(private readonly options: { repository: RequestLogRepository; cursors: CursorCodec; watcher: HeadWatcher<LogMark, number> }) {}

  async list(principal: Principal, filters: RequestLogFilters, clientGone?: AbortSignal): Promise<RequestLogPage> {
    this.#mayRead(principal);
    const order = pollingOrder(filters, 'now, a request id, or a nextAfter');
    const waitSeconds = filters.waitSeconds ?? 0;
    const accountId = principal.scopes.has('admin') ? null : principal.accountId;
    const query: Omit<RequestLogQuery, 'from'> = {
      accountId,
      environment: principal.environment,
      ...(filters.status !== undefined && { status: statusFilter(filters.status) }),
      ...(filters.method !== undefined && { method: filters.method.toUpperCase() }),
      ...(filters.path !== undefined && { pathPrefix: filters.path }),
      ...(filters.credential !== undefined && { credential: filters.credential }),
      ...(filters.idempotencyKey !== undefined && { idempotencyKey: filters.idempotencyKey }),
      ...(filters.requestId !== undefined && { requestId: filters.requestId }),
      ...(filters.createdGte !== undefined && { createdGte: new Date(filters.createdGte).toISOString() }),
      ...(filters.createdLt !== undefined && { createdLt: new Date(filters.createdLt).toISOString() }),
      order,
      limit: filters.limit + 1,
    };
    const binding = JSON.stringify([query.status ?? null, query.method ?? null, query.pathPrefix ?? null, query.credential ?? null, query.idempotencyKey ?? null, query.requestId ?? null, query.createdGte ?? null, query.createdLt ?? null, order]);
    let from: number | undefined;
    if (filters.cursor !== undefined) from = this.options.cursors.decode(CURSOR_KIND, filters.cursor, rowId, { binding });
    else if (filters.after !== undefined) from = await this.#after(principal, accountId, filters.after);
    const read = () => this.options.repository.page({ ...query, ...(from !== undefined && { from }) });
    const rows =
      waitSeconds > 0
        ? await this.options.watcher.held(`account:${principal.accountId}`, (mark) => mark.environment === principal.environment && (accountId === null || mark.accountId === accountId), waitSeconds * 1000, read, clientGone)
        : await read();
    const hasMore = rows.length > filters.limit;
    const items = rows.slice(0, filters.limit);
    const last = items.at(-1);
    const nextCursor = hasMore && last ? this.options.cursors.encode(CURSOR_KIND, last.id, binding) : null;
    const place = last ? last.id : from;
    const nextAfter = order === 'asc' && place !== undefined ? POSITION_PREFIX + this.options.cursors.encode(POSITION_KIND, place, principal.environment) : null;
    return { items, hasMore, nextCursor, nextAfter };
  }

  async get(principal: Principal, requestId: string): Promise<RequestLogRow> {
    this.#mayRead(principal);
    const row = await this.options.repository.byRequestId(requestId, principal.scopes.has('admin') ? null : principal.accountId, principal.environment);
    if (!row) throw new NotFoundError(`No request ${requestId} in your request log (entries are kept REQUEST_LOG_RETENTION_DAYS).`);
    return row;
  }

  /**
   * Requests of [from, to) per hour (UTC, `2026-11-29T04`) and status class (2 for 2xx): the
   * caller's account's, every account's for staff; of the credential's environment only.
   */
  async hourly(principal: Principal, from: string, to: string): Promise<HourlyCount[]> {
    this.#mayRead(principal);
    const accountId = principal.scopes.has('admin') ? null : principal.accountId;
    const environment = principal.environment;
    const start = Math.floor(Date.parse(from) / HOUR_MS) * HOUR_MS;
    const read = async (readFrom: number, readTo: number) => {
      const counts = await this.options.repository.hourlyCounts(accountId, environment, new Date(readFrom).toISOString(), new Date(readTo).toISOString());
      const byHour = new Map<number, HourlyCount[]>();
      for (const count of counts) {
        const hour = Date.parse(`${count.hour}:00:00.000Z`);
        byHour.set(hour, [...(byHour.get(hour) ?? []), count]);
      }
      return byHour;
    };
    const hours = await this.#hours.hours(`${accountId ?? '*'} ${environment}`, start, Date.parse(to), read, () => []);
    return [...hours.values()].flat();
  }

  /** `now`: the log's head; `pos_…`: a place a page gave; otherwise a request id the caller may see. */
  async #after(principal: Principal, accountId: number | null, after: string): Promise<number> {
    if (after === 'now') return this.options.repository.head();
    if (after.startsWith(POSITION_PREFIX)) {
      return this.options.cursors.decode(POSITION_KIND, after.slice(POSITION_PREFIX.length), (value) => (value === 0 ? 0 : rowId(value)), {
        binding: principal.environment,
        message: 'after: this position is not one this API gave out (nextAfter of a page): send it unchanged, a request id, or now.',
      });
    }
    const row = await this.options.repository.byRequestId(after, accountId, principal.environment);
    if (!row) throw new NotFoundError(`after: no request ${after} in your request log.`);
    return row.id;
  }

  #mayRead(principal: Principal): void {
    if (!hasScope(principal.scopes, 'read:logs')) throw new ForbiddenError('Reading the request log needs the read:logs scope.');
  }
}

function statusFilter(status: string): RequestLogQuery['status'] {
  const klass = /^([1-5])xx$/i.exec(status);
  if (klass) return { from: Number(klass[1]) * 100, below: Number(klass[1]) * 100 + 100 };
  if (/^[1-5][0-9]{2}$/.test(status)) return { exact: Number(status) };
  throw new InvalidRequestError('status: a class (2xx, 4xx…) or one status (404).', [{ field: 'status', message: 'is invalid' }]);
}
