import { coversScopes, hasScope, type Scope } from '../../kernel/scopes.js';
import { EVENT_TYPES, requiredScope, type EventType } from '../outbox/outbox.module.js';

/** A rolled API key in its grace period manages nothing but itself (decisions.md, issue 28). */
export const RETIRING_KEY_REFUSAL =
  'This key was rolled and is living out its grace period: a retiring key manages nothing but itself: it makes, changes, rotates the secret of or deletes no webhook. Use the key that replaced it.';

/**
 * An app's OAuth token changes only the webhooks its own app made (decisions.md, issue 28 §1):
 * retargeting the customer's own webhook to the app's URL, or rotating its secret, would keep
 * the app receiving (or signing) after its grant ended, since the customer's webhooks are not
 * bound to any grant.
 */
export const THIRD_PARTY_WEBHOOK_REFUSAL =
  'An app\'s OAuth token changes only the webhooks that app made: this webhook is the account\'s own (or another app\'s), and would outlive the app\'s authorization. Change it with the account\'s own credentials.';

/** The refusal when an OAuth token would change a webhook its app did not make (null: allowed). */
export function thirdPartyWebhookRefusal(credential: { kind: string; grant?: { clientId: string } }, webhookClientId: string | null): string | null {
  if (credential.kind !== 'oauth_token') return null;
  return credential.grant !== undefined && webhookClientId === credential.grant.clientId ? null : THIRD_PARTY_WEBHOOK_REFUSAL;
}

/** `order.placed`, `order.*` or `*`. */
export const EVENT_PATTERN = '^(\\*|[a-z_]+\\.\\*|[a-z_]+\\.[a-z_]+)$';

export function matchesPattern(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

export function subscribesTo(patterns: readonly string[], type: string): boolean {
  return patterns.some((pattern) => matchesPattern(pattern, type));
}

// The kind's scope is the outbox's rule, shared with the event log (issue 21).
export { requiredScope };

export interface Subscriber {
  accountId: number;
  /** The registering credential's scopes: `admin` among them makes it staff's webhook. */
  scopes: ReadonlySet<Scope>;
  events: readonly string[];
}

/**
 * Whether an event goes to a webhook: subscribed by pattern, the scope held, and the event
 * is public, the subscriber's own, or the subscriber is staff (holds `admin`). A customer
 * therefore never receives another customer's order or profile events.
 */
export function receives(subscriber: Subscriber, event: { type: string; audience: string }): boolean {
  if (event.type === 'webhook.test' || !subscribesTo(subscriber.events, event.type)) return false;
  const scope = requiredScope(event.type as EventType);
  if (scope !== null && !hasScope(subscriber.scopes, scope)) return false;
  if (event.audience === 'public' || subscriber.scopes.has('admin')) return true;
  return event.audience === `account:${subscriber.accountId}`;
}

export interface PatternProblem {
  pattern: string;
  problem: 'unknown' | 'forbidden';
  /** For `forbidden`: the scope it would need. */
  scope?: Scope;
}

/**
 * Checks what a credential asks to subscribe to. A pattern must match some kind; an exact
 * kind the credential may not receive is refused, naming the scope. A wildcard is accepted
 * and delivers only what the credential may receive.
 */
export function patternProblems(patterns: readonly string[], scopes: ReadonlySet<Scope>): PatternProblem[] {
  const problems: PatternProblem[] = [];
  for (const pattern of patterns) {
    if (!EVENT_TYPES.some((type) => matchesPattern(pattern, type))) problems.push({ pattern, problem: 'unknown' });
    else if (!pattern.includes('*')) {
      const scope = requiredScope(pattern as EventType);
      if (scope !== null && !hasScope(scopes, scope)) problems.push({ pattern, problem: 'forbidden', scope });
    }
  }
  return problems;
}

/** The scopes that decide delivery, kept with the webhook (least privilege: nothing more). */
export function deliveryScopes(granted: ReadonlySet<Scope>): Scope[] {
  if (granted.has('admin')) return ['admin'];
  return (['read:cheeses', 'read:orders', 'read:profile'] as const).filter((scope) => granted.has(scope));
}

/**
 * Why a credential may not manage (change, rotate, replay, test, delete, read the log of) a
 * webhook, or null when it may: it must cover every scope the webhook delivers under, so a
 * weaker credential of the same account can never redirect, re-sign or replay what a stronger
 * one subscribed to.
 */
export function managementRefusal(granted: ReadonlySet<Scope>, webhookScopes: readonly Scope[]): string | null {
  if (coversScopes(granted, webhookScopes)) return null;
  const missing = webhookScopes.filter((scope) => !hasScope(granted, scope));
  return `This webhook delivers under ${missing.join(', ')}, which this credential lacks: manage it with a credential that holds ${webhookScopes.join(' ')}.`;
}

/**
 * The scopes a webhook delivers under after its URL or events change: the changing
 * credential's own (never what the webhook held before). Staff changing another account's
 * webhook keep that webhook's scopes, which they cover: their `admin` would otherwise send
 * every account's events to a customer's URL.
 */
export function rederivedScopes(granted: ReadonlySet<Scope>, ownWebhook: boolean, current: readonly Scope[]): Scope[] {
  return ownWebhook ? deliveryScopes(granted) : [...current];
}

/** Attempts a delivery gets: the webhook's maximum, bounded by the configured schedule. */
export function attemptLimit(schedule: readonly number[], maxAttempts: number): number {
  return Math.min(schedule.length, maxAttempts);
}

export interface AttemptResult {
  /** The attempt just made, 1-based. */
  attempt: number;
  ok: boolean;
  /** The receiver's Retry-After (on 429/503), in ms from now. */
  retryAfterMs: number | null;
}

/**
 * When the next attempt is due, or null when the delivery is finished (delivered, or the last
 * allowed attempt failed: dead-lettered). Attempt n is due `schedule[n-1]` seconds after the
 * schedule's start. A receiver's Retry-After can postpone it, but never past the last
 * attempt's scheduled time: the schedule's span stays what was configured.
 */
export function nextAttemptAt(schedule: readonly number[], start: number, maxAttempts: number, result: AttemptResult, now: number): number | null {
  const limit = attemptLimit(schedule, maxAttempts);
  if (result.ok || result.attempt >= limit) return null;
  const scheduled = start + schedule[result.attempt]! * 1000;
  if (result.retryAfterMs === null) return Math.max(scheduled, now);
  const last = start + schedule[limit - 1]! * 1000;
  return Math.max(scheduled, now, Math.min(now + result.retryAfterMs, last));
}

/** RFC 9110 Retry-After: delay-seconds or an HTTP-date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^[0-9]{1,9}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** A webhook's health: receiving events, paused by its owner, or disabled by its receiver (410 Gone). */
export type WebhookHealth = 'active' | 'paused' | 'disabled';
export function webhookHealth(webhook: { active: boolean; disabledReason: string | null }): WebhookHealth {
  if (webhook.active) return 'active';
  return webhook.disabledReason ? 'disabled' : 'paused';
}
