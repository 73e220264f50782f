import { ForbiddenError, InvalidRequestError, NotFoundError } from '../../kernel/errors.js';
import type { CursorCodec } from '../../kernel/pagination.js';
import type { Principal } from '../../kernel/principal.js';
import { hasScope } from '../../kernel/scopes.js';
import { EVENT_TYPES, eventIdTime, eventJson, requiredScope, type EventType, type LogPosition, type LogQuery, type OutboxLog, type OutboxRecord } from '../outbox/outbox.module.js';
import { EventGoneError } from './event.errors.js';
import type { DeliveryStatusPort } from './events.ports.js';
import type { HeadWatcher, RowFilter } from '../../kernel/head-watcher.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { pollingOrder } from '../../kernel/log-polling.js';

const MAX_TYPES = 20;
const CURSOR_KIND = 'events';
/** A place in the log given to a poller whose page was empty (`nextAfter`): `pos_` and a signed position. */
const POSITION_KIND = 'events-position';
const POSITION_PREFIX = 'pos_';
/** The longest a request may be held (`wait`, seconds). */
export const MAX_WAIT_S = 25;

export interface EventFilters {
  limit: number;
  cursor?: string;
  type?: string | string[];
  createdGte?: string;
  createdLt?: string;
  objectType?: string;
  objectId?: string;
  undelivered?: boolean;
  /** Only the events this request caused (`metadata.request_id`: the dashboard's request log page). */
  requestId?: string;
  /** Default: `asc` with `after`, `desc` otherwise. */
  order?: 'asc' | 'desc';
  /** An event id, `now` (the log's head), or a `pos_…` position a previous empty page gave. */
  after?: string;
  /** Seconds to hold the request while nothing past `after` is visible (0 to 25). */
  waitSeconds?: number;
}

/** How a held request ends early: the client went away. */
export interface HoldOptions {
  signal?: AbortSignal;
}

/** A page as JSON text: each item the envelope's bytes and `pending_webhooks` (outbox.envelope.ts). */
export interface EventPageText {
  body: string;
  count: number;
}

const matches = (pattern: string, type: string) => pattern === '*' || (pattern.endsWith('.*') ? type.startsWith(pattern.slice(0, -1)) : pattern === type);

/**
 * The event log (issue 21): the outbox read in commit order, through the prefix no open
 * transaction can still add to (outbox-position.ts). A caller sees the kinds its credential's
 * scopes cover (as a webhook it registered would receive), and of those the public events,
 * its account's, or every one for staff; only this deployment's environment. Anything else
 * is a 404, as if it did not exist.
 */
export class EventService {
  constructor(
    private readonly options: { log: OutboxLog; deliveries: DeliveryStatusPort; cursors: CursorCodec; environment: string; retentionDays: number; watcher: HeadWatcher<OutboxRecord, LogPosition>; clock?: Clock },
  ) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  /**
   * A page of the log. With `waitSeconds` and nothing visible past `after`, the answer waits
   * until an event it would list becomes visible (the watcher wakes it), the wait ends, the
   * client goes away, or the instance drains: then it answers the page as it stands.
   */
  async list(principal: Principal, filters: EventFilters, hold: HoldOptions = {}): Promise<EventPageText> {
    const order = pollingOrder(filters, 'an event id, or now');
    const waitSeconds = filters.waitSeconds ?? 0;
    const types = this.#types(principal, filters.type);
    if (filters.objectId !== undefined && filters.objectType === undefined) throw new InvalidRequestError('object_id needs object_type.', [{ field: 'object_id', message: 'needs object_type' }]);
    const staff = principal.scopes.has('admin');
    const accountId = staff ? null : principal.accountId;
    const binding = JSON.stringify([types, filters.createdGte ?? null, filters.createdLt ?? null, filters.objectType ?? null, filters.objectId ?? null, Boolean(filters.undelivered), order, ...(filters.requestId !== undefined ? [filters.requestId] : [])]);
    let from: LogPosition | undefined;
    if (filters.cursor !== undefined) from = this.options.cursors.decode(CURSOR_KIND, filters.cursor, readPosition, { binding });
    else if (filters.after !== undefined) from = await this.#after(principal, filters.after);
    const query: LogQuery = {
      environment: this.options.environment,
      audiences: staff ? null : ['public', `account:${principal.accountId}`],
      types,
      ...(filters.createdGte !== undefined && { createdGte: new Date(filters.createdGte).toISOString() }),
      ...(filters.createdLt !== undefined && { createdLt: new Date(filters.createdLt).toISOString() }),
      ...(filters.objectType !== undefined && { object: { type: filters.objectType, ...(filters.objectId !== undefined && { id: filters.objectId }) } }),
      ...(filters.requestId !== undefined && { requestId: filters.requestId }),
      ...(filters.undelivered && { outboxIdsIn: this.options.deliveries.undeliveredOutboxIds(accountId) }),
      order,
      ...(from && { from }),
      limit: filters.limit + 1,
    };
    const rows = waitSeconds > 0 ? await this.#held(principal, query, waitSeconds, hold.signal) : await this.options.log.page(query);
    const hasMore = rows.length > filters.limit;
    const items = rows.slice(0, filters.limit);
    const last = items.at(-1);
    const nextCursor = hasMore && last ? this.options.cursors.encode(CURSOR_KIND, [last.txid, last.outboxId], binding) : null;
    const pending = await this.options.deliveries.undeliveredCounts(items.map((row) => row.outboxId), accountId);
    // Where a poller goes on from: the last event it got, or, on an empty page, the place it looked past.
    const nextAfter = order !== 'asc' ? null : last ? last.eventId : from ? this.#positionToken(from) : null;
    const body = `{"items":[${items.map((row) => this.#json(row, pending)).join(',')}],"hasMore":${hasMore},"nextCursor":${JSON.stringify(nextCursor)},"nextAfter":${JSON.stringify(nextAfter)}}`;
    return { body, count: items.length };
  }

  /** The page, waiting (at most `waitSeconds`) for a row it would list when it is empty. */
  #held(principal: Principal, query: LogQuery, waitSeconds: number, clientGone?: AbortSignal): Promise<OutboxRecord[]> {
    return this.options.watcher.held(`account:${principal.accountId}`, rowFilter(query), waitSeconds * 1000, () => this.options.log.page(query), clientGone);
  }

  /** `after`: an event id, `now` (the head: only what comes next), or a position an empty page gave. */
  async #after(principal: Principal, after: string): Promise<LogPosition | undefined> {
    if (after === 'now') return (await this.options.log.head()) ?? { txid: 0, id: 0 };
    if (after.startsWith(POSITION_PREFIX)) {
      try {
        return this.options.cursors.decode(POSITION_KIND, after.slice(POSITION_PREFIX.length), readHeadPosition, { binding: this.options.environment });
      } catch {
        throw new InvalidRequestError('after: this position is not one this API gave out (nextAfter of a page): send it unchanged, an event id, or now.', [{ field: 'after', message: 'is invalid' }]);
      }
    }
    return this.#positionOf(principal, after);
  }

  #positionToken(position: LogPosition): string {
    return POSITION_PREFIX + this.options.cursors.encode(POSITION_KIND, [position.txid, position.id], this.options.environment);
  }

  async get(principal: Principal, eventId: string): Promise<string> {
    const row = await this.#visible(principal, eventId);
    const pending = await this.options.deliveries.undeliveredCounts([row.outboxId], principal.scopes.has('admin') ? null : principal.accountId);
    return this.#json(row, pending);
  }

  #json(row: OutboxRecord, pending: ReadonlyMap<number, number>): string {
    return eventJson({ eventId: row.eventId, eventType: row.type, createdAt: row.createdAt, data: row.data, metadata: row.metadata }, pending.get(row.outboxId) ?? 0);
  }

  async #positionOf(principal: Principal, eventId: string): Promise<LogPosition> {
    const row = await this.#visible(principal, eventId);
    return { txid: row.txid, id: row.outboxId };
  }

  /** The event if this caller may see it; 410 for an id whose time is past the retention, 404 otherwise. */
  async #visible(principal: Principal, eventId: string): Promise<OutboxRecord> {
    const row = await this.options.log.byEventId(eventId, this.options.environment);
    if (row && this.#maySee(principal, row)) return row;
    const recordedAt = eventIdTime(eventId);
    if (!row && recordedAt !== undefined && recordedAt < this.#clock.now() - this.options.retentionDays * 86_400_000) {
      throw new EventGoneError(`Event ${eventId} is older than the log keeps (${this.options.retentionDays} days): it has been pruned. Start again without after, or from a newer event.`);
    }
    throw new NotFoundError(`Event ${eventId} not found.`);
  }

  #maySee(principal: Principal, row: OutboxRecord): boolean {
    const scope = requiredScope(row.type as EventType);
    if (scope !== null && !hasScope(principal.scopes, scope)) return false;
    return row.audience === 'public' || principal.scopes.has('admin') || row.audience === `account:${principal.accountId}`;
  }

  /**
   * The exact kinds asked for (every kind without `type`), narrowed to what the credential may
   * read. A pattern matching no kind is a 400; an exact kind it may not read, a 403 naming the
   * scope; a wildcard keeps only what it may.
   */
  #types(principal: Principal, raw: string | string[] | undefined): EventType[] {
    const patterns = raw === undefined ? ['*'] : (Array.isArray(raw) ? raw : [raw]).flatMap((value) => value.split(',')).map((value) => value.trim());
    if (patterns.length > MAX_TYPES) throw new InvalidRequestError(`type: at most ${MAX_TYPES} kinds or wildcards.`, [{ field: 'type', message: `at most ${MAX_TYPES}` }]);
    const readable = (type: EventType) => {
      const scope = requiredScope(type);
      return scope === null || hasScope(principal.scopes, scope);
    };
    const kinds = new Set<EventType>();
    for (const pattern of patterns) {
      const matched = EVENT_TYPES.filter((type) => matches(pattern, type));
      if (matched.length === 0) throw new InvalidRequestError(`type: ${JSON.stringify(pattern)} is no event kind (see docs/events.md).`, [{ field: 'type', message: `unknown kind ${pattern}` }]);
      if (!pattern.includes('*') && !readable(pattern as EventType)) {
        throw new ForbiddenError(`type: reading ${pattern} needs the ${requiredScope(pattern as EventType)} scope.`);
      }
      for (const type of matched) if (readable(type)) kinds.add(type);
    }
    return [...kinds].sort();
  }
}

/** Whether a new row belongs on the page `query` asks for (in memory: what the watcher wakes by). */
function rowFilter(query: LogQuery): RowFilter<OutboxRecord> {
  const audiences = query.audiences && new Set(query.audiences);
  const types = query.types && new Set(query.types);
  return (row) =>
    row.environment === query.environment &&
    (audiences === null || audiences.has(row.audience)) &&
    (types === null || types.has(row.type)) &&
    (query.object === undefined || (row.aggregateType === query.object.type && (query.object.id === undefined || row.aggregateId === query.object.id))) &&
    (query.requestId === undefined || requestIdOf(row) === query.requestId);
}

function requestIdOf(row: OutboxRecord): unknown {
  try {
    return (JSON.parse(row.metadata) as { request_id?: unknown }).request_id;
  } catch {
    return undefined;
  }
}

/** A position a page gave as `nextAfter`: the head of an empty log is (0, 0). */
function readHeadPosition(position: unknown): LogPosition | undefined {
  if (Array.isArray(position) && position.length === 2 && position[0] === 0 && position[1] === 0) return { txid: 0, id: 0 };
  return readPosition(position);
}

function readPosition(position: unknown): LogPosition | undefined {
  if (!Array.isArray(position) || position.length !== 2) return undefined;
  const [txid, id] = position as unknown[];
  return Number.isSafeInteger(txid) && (txid as number) >= 0 && Number.isSafeInteger(id) && (id as number) > 0 ? { txid: txid as number, id: id as number } : undefined;
}
