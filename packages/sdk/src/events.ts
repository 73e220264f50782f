import type { ApiClient, ApiPaths } from './api.js';
import { paginate, unwrap } from './call.js';
import type { CallOptions } from './resources.js';
import type { EventType, LogPage } from './types.js';
import { tailPages, waitSecondsOf } from './tail.js';

type ListOperation = ApiPaths['/events']['get'];
export type EventListQuery = NonNullable<ListOperation['parameters']['query']>;
type ListBody = ListOperation['responses'][200]['content']['application/json'];
/** An event of the log: the webhook envelope plus `pending_webhooks`; narrows on `type`. */
export type Event = ListBody['items'][number];

/** Kinds and patterns the log filters on: `order.shipped`, `order.*`. */
export type EventTypeFilter = EventType | `${string}.*`;

export interface TailOptions {
  /** Yield the events after this one (an event id, or a `nextAfter` position); without it, only those that come after now. */
  after?: string;
  types?: readonly EventTypeFilter[];
  signal?: AbortSignal;
  /** How long the server holds each poll while nothing is new (`wait`, 1 to 25 s; 25 by default). */
  waitSeconds?: number;
  /** A pause after a poll that came back empty, on top of the server's hold (0 by default). */
  pollIntervalMs?: number;
}

const TAIL_PAGE = 100;

export class Events {
  constructor(private readonly api: ApiClient) {}

  /** Newest first by default; `order: 'asc'` with `after` walks forward from an event. */
  list(query: EventListQuery = {}, options?: CallOptions): Promise<LogPage<Event>> {
    return unwrap(this.api.GET('/events', { params: { query }, signal: options?.signal }));
  }

  listAll(query: Omit<EventListQuery, 'cursor'> = {}, options?: CallOptions): AsyncGenerator<Event, void, undefined> {
    return paginate((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) } as EventListQuery, options));
  }

  get(id: string, options?: CallOptions): Promise<Event> {
    return unwrap(this.api.GET('/events/{id}', { params: { path: { id } }, signal: options?.signal }));
  }

  /**
   * Every new event, oldest first, as it becomes visible: long-polls forward
   * (`after=…&wait=25`): the server holds each request until an event arrives (answered within
   * about half a second of its commit) or the wait ends, and each answer's `nextAfter` is where
   * the next poll goes on, so nothing is skipped or yielded twice. Ends quietly when `signal`
   * aborts.
   */
  tail(options: TailOptions = {}): AsyncGenerator<Event, void, undefined> {
    const { signal } = options;
    const type = options.types && options.types.length > 0 ? [...options.types] : undefined;
    const wait = waitSecondsOf(options.waitSeconds);
    return tailPages<Event>((after, hold) => {
      const query = { ...(type ? { type } : {}), after, wait: hold ? wait : 0, limit: TAIL_PAGE } as EventListQuery;
      return unwrap(this.api.GET('/events', { params: { query }, signal }));
    }, options);
  }
}
