import { ValidationFailedError } from '../../kernel/errors.js';
import { hasVisibleText } from '../../kernel/text.js';
import { DATE_MESSAGE, dayOf, LATEST_INSTANT_MS } from '../../kernel/instants.js';
import { EVENT_TYPES } from '../outbox/outbox.module.js';
import type { AttemptView, DeadLetter, OutcomeFilter, WebhookRecord } from '../webhooks/webhooks.module.js';
import { formatTime, listOf } from './format.js';
import { localPath } from './local-path.js';

/** What the webhooks pages share: labels, the event kinds as checkboxes, filters in URLs, where a form returns. */

/** The outcome checkboxes of the deliveries page, in order; `pending` is a part of `failed` (webhooks' OutcomeFilter). */
export const OUTCOME_FILTERS: readonly { value: OutcomeFilter; label: string }[] = [
  { value: 'delivered', label: 'Delivered' },
  { value: 'failed', label: 'Failed' },
  { value: 'pending', label: 'Pending' },
  { value: 'dead_lettered', label: 'Dead-lettered' },
];

/** Rotating a secret, deleting a webhook and bulk replays ask for the password after 10 minutes, in every environment (issue 19). */
export const SENSITIVE = true;

/** Rows per page of the attempt log and the dead letter queue. */
export const PAGE_SIZE = 20;

const RESOURCES: Record<string, string> = { order: 'Orders', cheese: 'Catalogue', customer: 'Customers', api_key: 'API keys' };

/** The kinds a webhook may subscribe to (webhook.test goes only to the webhook tested), grouped by resource; a group pattern (`order.*`) ticks its kinds. */
export function eventGroups(chosen: readonly string[] = []): { legend: string; id: string; kinds: { name: string; id: string; checked: boolean }[] }[] {
  const groups = new Map<string, { name: string; id: string; checked: boolean }[]>();
  for (const type of EVENT_TYPES) {
    if (type === 'webhook.test') continue;
    const resource = type.slice(0, type.indexOf('.'));
    const kinds = groups.get(resource) ?? groups.set(resource, []).get(resource)!;
    kinds.push({ name: type, id: `event-${type.replace(/[._]/g, '-')}`, checked: chosen.includes(type) || chosen.includes(`${resource}.*`) });
  }
  return [...groups].map(([resource, kinds]) => ({ legend: RESOURCES[resource] ?? resource, id: `events-${resource.replace('_', '-')}`, kinds }));
}

export function webhookStatus(webhook: Pick<WebhookRecord, 'active' | 'disabledReason'>): string {
  if (webhook.active) return 'Active';
  return webhook.disabledReason ? 'Disabled' : 'Paused';
}

export function eventsText(events: readonly string[]): string {
  return events.includes('*') ? 'All events' : events.join(', ');
}

/** An attempt's status as the log shows it: a failed attempt still waiting for its next one is Pending. */
export function attemptStatus(attempt: Pick<AttemptView, 'outcome' | 'pending'>): string {
  if (attempt.outcome === 'delivered') return 'Delivered';
  if (attempt.outcome === 'dead_lettered') return 'Dead-lettered';
  return attempt.pending ? 'Pending' : 'Failed';
}

export function presentAttempt(attempt: AttemptView) {
  return {
    ...attempt,
    status: attemptStatus(attempt),
    made: formatTime(attempt.createdAt),
    response: attempt.statusCode === null ? 'No answer' : String(attempt.statusCode),
    next: attempt.pending ? formatTime(attempt.nextAttemptAt) : '—',
  };
}

export function presentDeadLetter(letter: DeadLetter) {
  return { ...letter, deadLettered: formatTime(letter.deadLetteredAt), lastStatus: letter.lastStatusCode === null ? 'No answer' : String(letter.lastStatusCode) };
}

/** A query string of the non-empty values, in order (`?` included; empty when there are none). */
export function queryOf(params: Record<string, string | readonly string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const v of [value ?? []].flat()) if (v !== '') search.append(name, v);
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Where a form sends the browser back to: a webhooks page of this dashboard, or the default. */
export function backTo(value: unknown, fallback: string): string {
  return localPath(value, '/dashboard/webhooks', fallback);
}

/** A path with one query parameter set (replacing it), keeping the others. */
export function withParam(path: string, name: string, value: string): string {
  const url = new URL(path, 'http://dashboard.invalid');
  url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

/** A `YYYY-MM-DD` of the date inputs as the UTC instant starting that day (or the next, for an inclusive end); '' is no date. */
export function dayStart(field: string, value: string | undefined, nextDay = false): string | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = dayOf(value);
  if (ms === null) throw ValidationFailedError.field(field, DATE_MESSAGE);
  const at = ms + (nextDay ? 86_400_000 : 0);
  // The day after 9999-12-31 is past every instant stored: no upper bound, rather than year 10000.
  return at > LATEST_INSTANT_MS ? undefined : new Date(at).toISOString();
}

/** The add and edit form's fields, checked as the API's schema checks them (the service checks the rest). */
export interface WebhookForm {
  url: string;
  events: string[];
  description: string | null;
  maxAttempts: 5 | 6;
}

export function readWebhookForm(body: { url: string; events?: unknown; allEvents?: string; description?: string; maxAttempts?: string }): WebhookForm {
  const url = body.url.trim();
  if (url === '') throw ValidationFailedError.field('url', 'is required');
  if (url.length > 2000) throw ValidationFailedError.field('url', 'must be at most 2000 characters');
  const kinds = listOf(body.events);
  const events = body.allEvents === '*' ? ['*'] : [...new Set(kinds)];
  if (events.length === 0) throw ValidationFailedError.field('events', 'needs at least one event kind: tick the kinds to receive, or All events');
  const description = (body.description ?? '').trim();
  if (description.length > 500) throw ValidationFailedError.field('description', 'must be at most 500 characters');
  if (description !== '' && (!hasVisibleText(description) || /\p{Cc}/u.test(description))) throw ValidationFailedError.field('description', 'must be visible text');
  const maxAttempts = body.maxAttempts === '5' ? 5 : body.maxAttempts === undefined || body.maxAttempts === '6' ? 6 : null;
  if (maxAttempts === null) throw ValidationFailedError.field('maxAttempts', 'must be 5 or 6');
  return { url, events, description: description === '' ? null : description, maxAttempts };
}
