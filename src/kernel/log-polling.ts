import { InvalidRequestError } from './errors.js';

/** What a log's list takes to page or poll forward (the event log, the request log). */
export interface PollingFilters {
  cursor?: string;
  order?: 'asc' | 'desc';
  after?: string;
  waitSeconds?: number;
  createdGte?: string;
  createdLt?: string;
}

/**
 * The rules both logs share, and the order they answer in: `after` polls forward (`asc` by
 * default with it), `wait` holds only a poll that has a place to wait past, a cursor already
 * says where the page starts, and a time range must not be empty.
 */
export function pollingOrder(filters: PollingFilters, places: string): 'asc' | 'desc' {
  const order = filters.order ?? (filters.after !== undefined ? 'asc' : 'desc');
  if ((filters.waitSeconds ?? 0) > 0 && filters.after === undefined) throw new InvalidRequestError(`wait holds the request until something past after arrives: send after (${places}).`, [{ field: 'wait', message: 'needs after' }]);
  if (filters.after !== undefined && order !== 'asc') throw new InvalidRequestError('after pages forward: send it with order=asc.', [{ field: 'after', message: 'needs order=asc' }]);
  if (filters.after !== undefined && filters.cursor !== undefined) throw new InvalidRequestError('Send either after or cursor, not both: the cursor already says where the page starts.', [{ field: 'cursor', message: 'not with after' }]);
  if (filters.createdGte !== undefined && filters.createdLt !== undefined && Date.parse(filters.createdGte) >= Date.parse(filters.createdLt)) {
    throw new InvalidRequestError('created_gte must be before created_lt.', [{ field: 'created_lt', message: 'must be after created_gte' }]);
  }
  return order;
}
