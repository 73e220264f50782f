import type { ApiClient, ApiPaths } from './client.js';
import { paginate, unwrap } from './call.js';
import { FromagerieError } from './errors.js';
import type { CallOptions } from './resources.js';
import type { EventType, Page } from './types.js';

type ListOperation = ApiPaths['/events']['get'];
export type EventListQuery = NonNullable<ListOperation['parameters']['query']>;
type ListBody = ListOperation['responses'][200]['content']['application/json'];
/** An event of the log: the webhook envelope plus `pending_webhooks`; narrows on `type`. */
export type Event = ListBody['items'][number];

/** Kinds and patterns the log filters on: `order.shipped`, `order.*`. */
export type EventTypeFilter = EventType | `${string}.*`;

export interface TailOptions {
  /** Yield the events after this one; without it, only those that come after the newest one now. */
  after?: string;
  types?: readonly EventTypeFilter[];
  signal?: AbortSignal;
  /** How long to wait when nothing is new; the server's `X-Poll-Interval` otherwise (5 s without it). */
  pollIntervalMs?: number;
}

const DEFAULT_POLL_MS = 5_000;
const TAIL_PAGE = 100;

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export class Events {
  constructor(private readonly api: ApiClient) {}

  /** Newest first by default; `order: 'asc'` with `after` walks forward from an event. */
  list(query: EventListQuery = {}, options?: CallOptions): Promise<Page<Event>> {
    return unwrap(this.api.GET('/events', { params: { query }, signal: options?.signal }));
  }

  listAll(query: Omit<EventListQuery, 'cursor'> = {}, options?: CallOptions): AsyncGenerator<Event, void, undefined> {
    return paginate((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) } as EventListQuery, options));
  }

  get(id: string, options?: CallOptions): Promise<Event> {
    return unwrap(this.api.GET('/events/{id}', { params: { path: { id } }, signal: options?.signal }));
  }

  /**
   * Every new event, oldest first, as it is committed: polls forward with `order=asc&after=…`,
   * sends `If-None-Match` so an unchanged log costs a 304, and waits the server's
   * `X-Poll-Interval` between empty polls. Ends quietly when `signal` aborts.
   */
  async *tail(options: TailOptions = {}): AsyncGenerator<Event, void, undefined> {
    const { signal } = options;
    const type = options.types && options.types.length > 0 ? [...options.types] : undefined;
    const filter = (type ? { type } : {}) as EventListQuery;
    try {
      let after = options.after ?? (await this.list({ ...filter, limit: 1 } as EventListQuery, { signal })).items[0]?.id;
      let etag: string | null = null;
      while (!signal?.aborted) {
        const query = { ...filter, order: 'asc', limit: TAIL_PAGE, ...(after ? { after } : {}) } as EventListQuery;
        const { data, error, response }: { data?: unknown; error?: unknown; response: Response } = await this.api.GET('/events', { params: { query }, headers: etag ? { 'if-none-match': etag } : {}, signal });
        if (response.status !== 304 && !response.ok) throw new FromagerieError(response, error);
        const page = response.status === 304 ? null : (data as Page<Event>);
        if (page && page.items.length > 0) {
          for (const event of page.items) yield event;
          after = page.items[page.items.length - 1]!.id;
          etag = null;
          if (page.hasMore) continue;
        } else {
          etag = response.headers.get('etag') ?? etag;
        }
        const advised = Number(response.headers.get('x-poll-interval'));
        await pause(options.pollIntervalMs ?? (advised > 0 ? advised * 1000 : DEFAULT_POLL_MS), signal);
      }
    } catch (error) {
      if (signal?.aborted) return;
      throw error;
    }
  }
}
