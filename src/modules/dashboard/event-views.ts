import { EVENT_TYPES } from '../outbox/outbox.module.js';
import type { EventFilters } from '../events/events.module.js';
import type { EventWebhook } from '../webhooks/webhooks.module.js';
import { badge, outcomeBadge, type Badge } from './badges.js';
import { when } from './format.js';
import { attemptStatus, dayStart, queryOf } from './webhook-views.js';

/** What the Events and Logs pages share: filters read from the URL, rows for the list and the live tail. */

/** Rows per page of the event log and the request log. */
export const LOG_PAGE_SIZE = 25;
/** How long a live tail's request is held before it answers empty and asks again (under the log's 25 s). */
export const TAIL_WAIT_S = 20;
/** New rows one answer of the tail brings at most; more come with the next one. */
export const TAIL_BATCH = 50;

/** An item of the event log as GET /v2/events answers it (the envelope and `pending_webhooks`). */
export interface EventItem {
  id: string;
  type: string;
  created_at: string;
  data: unknown;
  metadata: Record<string, unknown>;
  pending_webhooks: number;
}

export interface EventPageJson {
  items: EventItem[];
  hasMore: boolean;
  nextCursor: string | null;
  nextAfter: string | null;
}

/** The object types an event may be about (the event log's `object_type`). */
export const OBJECT_TYPES = ['order', 'cheese', 'customer', 'api_key', 'webhook'] as const;

/** The Type field's suggestions: every kind, and each family (`order.*`). */
export const TYPE_SUGGESTIONS = [...new Set(EVENT_TYPES.map((type) => `${type.slice(0, type.indexOf('.'))}.*`)), ...EVENT_TYPES];

export interface EventQueryValues {
  type?: string;
  objectType?: string;
  objectId?: string;
  from?: string;
  to?: string;
}

const text = (value: string | undefined) => (value ?? '').trim();

/** The filters as the form shows them (empty strings for none) and as the event log takes them. */
export function eventFilters(query: EventQueryValues): { form: Required<EventQueryValues>; filters: Omit<EventFilters, 'limit'> } {
  const form = { type: text(query.type), objectType: text(query.objectType), objectId: text(query.objectId), from: text(query.from), to: text(query.to) };
  const createdGte = dayStart('from', form.from);
  const createdLt = dayStart('to', form.to, true);
  return {
    form,
    filters: {
      ...(form.type && { type: form.type }),
      ...(form.objectType && { objectType: form.objectType }),
      ...(form.objectId && { objectId: form.objectId }),
      ...(createdGte && { createdGte }),
      ...(createdLt && { createdLt }),
    },
  };
}

/** A row of the event list (and of the live tail). */
export function eventRow(item: EventItem, now: number) {
  const objectType = item.metadata.object_type;
  const objectId = item.metadata.object_id;
  return {
    id: item.id,
    type: item.type,
    object: typeof objectType === 'string' && objectId !== undefined && objectId !== null ? `${objectType} ${String(objectId)}` : '—',
    when: when(item.created_at, now),
    href: `/dashboard/events/${item.id}`,
  };
}

/**
 * How long the next poller waits before asking: 2 s once polling; a moment after an empty answer
 * (a held request ended by a draining instance answers at once: no loop of instant requests);
 * none after new rows.
 */
export function tailDelay(polling: boolean, rows: number): string | null {
  if (polling) return '2s';
  return rows === 0 ? '250ms' : null;
}

/** The fragment route a live tail asks, with the page's filters, from `after`; `wait=0` once the long poll failed (polling then). */
export function tailUrl(path: string, filters: Record<string, string>, after: string, polling: boolean): string {
  return `${path}${queryOf({ ...filters, after, ...(polling && { wait: '0' }) })}`;
}

const DELIVERY_BADGES: Record<string, Badge> = {
  delivered: outcomeBadge('Delivered', 'succeeded'),
  pending: outcomeBadge('Pending', 'pending'),
  dead: outcomeBadge('Dead-lettered', 'dead'),
};
const ATTEMPT_OUTCOMES = { Delivered: 'succeeded', Failed: 'failed', Pending: 'pending', 'Dead-lettered': 'dead' } as const;

/** One webhook's standing with an event, as its page shows it. */
export function eventWebhookRow(row: EventWebhook, now: number) {
  const attempt = row.latestAttempt;
  const status = attempt ? attemptStatus(attempt) : null;
  return {
    id: row.webhook.id,
    url: row.webhook.url,
    delivery: row.delivery ? (DELIVERY_BADGES[row.delivery.state] ?? badge(row.delivery.state, 'neutral')) : badge('Not sent', 'neutral'),
    attempts: row.delivery?.attempts ?? 0,
    attempt: attempt && status ? { badge: outcomeBadge(status, ATTEMPT_OUTCOMES[status as keyof typeof ATTEMPT_OUTCOMES] ?? 'pending'), href: `/dashboard/webhooks/${row.webhook.id}/deliveries/${attempt.id}`, when: when(attempt.createdAt, now), number: attempt.attempt } : null,
  };
}
