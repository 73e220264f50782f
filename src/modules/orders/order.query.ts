import type { OrderQuery } from './order.service.js';
import type { OrderStatus } from './order.table.js';

/** The history's query parameters, as the route's schema admits them. */
export interface OrderQueryParams {
  limit?: number;
  cursor?: string;
  status?: string;
  from?: string;
  to?: string;
  customer?: string;
}

/** `status` is comma-separated (each checked by the schema's pattern); times, any RFC 3339 offset, compare as UTC. */
export function orderQueryOf(params: OrderQueryParams): OrderQuery {
  const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());
  return { limit: params.limit ?? 20, cursor: params.cursor, statuses: params.status?.split(',') as OrderStatus[] | undefined, from: iso(params.from), to: iso(params.to), customer: params.customer };
}
