import type { ApiClient, ApiPaths } from './api.js';
import { paginate, unwrap } from './call.js';
import type { CallOptions } from './resources.js';
import type { LogPage } from './types.js';
import { tailPages, waitSecondsOf, type TailLoop } from './tail.js';

type ListOperation = ApiPaths['/request-logs']['get'];
export type RequestLogListQuery = NonNullable<ListOperation['parameters']['query']>;
type ListBody = ListOperation['responses'][200]['content']['application/json'];
/** One request your account made: method, path, status, duration, credential, bodies (redacted). */
export type RequestLogEntry = ListBody['items'][number];

export interface RequestLogTailOptions extends TailLoop {
  /** The filters of `list` (status class or code, method, path prefix, credential…). */
  filters?: Omit<RequestLogListQuery, 'after' | 'wait' | 'cursor' | 'order' | 'limit'>;
  /** How long the server holds each poll while nothing is new (`wait`, 1 to 25 s; 25 by default). */
  waitSeconds?: number;
}

const TAIL_PAGE = 100;

/** The request log (`read:logs`): what your integration sent and got back, secrets redacted. */
export class RequestLogs {
  constructor(private readonly api: ApiClient) {}

  /** Newest first by default; `order: 'asc'` with `after` walks forward. */
  list(query: RequestLogListQuery = {}, options?: CallOptions): Promise<LogPage<RequestLogEntry>> {
    return unwrap(this.api.GET('/request-logs', { params: { query }, signal: options?.signal }));
  }

  listAll(query: Omit<RequestLogListQuery, 'cursor'> = {}, options?: CallOptions): AsyncGenerator<RequestLogEntry, void, undefined> {
    return paginate((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) } as RequestLogListQuery, options));
  }

  /** The request with this `X-Request-Id` (an event's `metadata.request_id`). */
  get(requestId: string, options?: CallOptions): Promise<RequestLogEntry> {
    return unwrap(this.api.GET('/request-logs/{requestId}', { params: { path: { requestId } }, signal: options?.signal }));
  }

  /** Every new request, oldest first, as it is recorded (long-polled: `after=now&wait=25`, then `nextAfter`). */
  tail(options: RequestLogTailOptions = {}): AsyncGenerator<RequestLogEntry, void, undefined> {
    const wait = waitSecondsOf(options.waitSeconds);
    return tailPages<RequestLogEntry>((after, hold) => {
      const query = { ...options.filters, after, wait: hold ? wait : 0, limit: TAIL_PAGE } as RequestLogListQuery;
      return unwrap(this.api.GET('/request-logs', { params: { query }, signal: options.signal }));
    }, options);
  }
}
