import { ValidationFailedError } from '../../kernel/errors.js';
import { DATE_MESSAGE, dayOf, LATEST_INSTANT_MS } from '../../kernel/instants.js';
import { EVENT_TYPES } from '../outbox/outbox.module.js';
import { webhookHealth, WebhookInput, type AttemptView, type DeadLetter, type OutcomeFilter, type WebhookHealth, type WebhookRecord } from '../webhooks/webhooks.module.js';
import { attemptBadge, httpStatusBadge } from './badges.js';
import { checkForm } from './form-check.js';
import { listOf, when } from './format.js';
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

const HEALTH_WORDS: Record<WebhookHealth, string> = { active: 'Active', paused: 'Paused', disabled: 'Disabled' };

/** The webhooks module's health of a webhook, in the page's words. */
export function webhookStatus(webhook: Pick<WebhookRecord, 'active' | 'disabledReason'>): string {
  return HEALTH_WORDS[webhookHealth(webhook)];
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

/** An attempt as the pages show it, its times relative to `now` (the app's clock). */
export function presentAttempt(attempt: AttemptView, now: number) {
  const status = attemptStatus(attempt);
  return {
    ...attempt,
    status,
    outcomeBadge: attemptBadge(status),
    made: when(attempt.createdAt, now),
    response: attempt.statusCode === null ? 'No answer' : String(attempt.statusCode),
    responseBadge: httpStatusBadge(attempt.statusCode),
    next: when(attempt.pending ? attempt.nextAttemptAt : null, now),
  };
}

export function presentDeadLetter(letter: DeadLetter, now: number) {
  return { ...letter, deadLettered: when(letter.deadLetteredAt, now), lastStatus: httpStatusBadge(letter.lastStatusCode), outcomeBadge: attemptBadge('Dead-lettered') };
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

/** The add and edit form's fields, judged by the API's schema (WebhookInput; the service checks the rest). */
export interface WebhookForm {
  url: string;
  events: string[];
  description: string | null;
  maxAttempts: 5 | 6;
}

export function readWebhookForm(body: { url: string; events?: unknown; allEvents?: string; description?: string; maxAttempts?: string }): WebhookForm {
  const url = body.url.trim();
  // The form's words for what only a form gets wrong (an empty field, no box ticked); every other rule is WebhookInput's.
  if (url === '') throw ValidationFailedError.field('url', 'is required');
  const kinds = listOf(body.events);
  const events = body.allEvents === '*' ? ['*'] : [...new Set(kinds)];
  if (events.length === 0) throw ValidationFailedError.field('events', 'needs at least one event kind: tick the kinds to receive, or All events');
  const description = (body.description ?? '').trim();
  const maxAttempts = body.maxAttempts === undefined ? 6 : Number(body.maxAttempts);
  const form = { url, events, description: description === '' ? null : description, maxAttempts };
  checkForm(WebhookInput, form);
  return form as WebhookForm;
}
