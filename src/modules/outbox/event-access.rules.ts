import type { Scope } from '../../kernel/scopes.js';
import type { EventAudience, EventType } from './event.types.js';

/**
 * The scope a credential must hold to receive a kind, by webhook or from the event log
 * (decisions.md): the catalogue needs `read:cheeses`, orders `read:orders`, the customer
 * record `read:profile`. Key expiry and webhook tests concern the account's own credentials
 * and webhooks: no scope beyond being the account.
 */
export function requiredScope(type: EventType): Scope | null {
  if (type.startsWith('cheese.')) return 'read:cheeses';
  if (type.startsWith('order.')) return 'read:orders';
  if (type.startsWith('customer.')) return 'read:profile';
  return null;
}

/**
 * Whether an event carries the identifiers of the request that caused it (`request_id`,
 * `metadata.idempotency_key`). Only an event of one account's (its orders, profile, keys,
 * webhooks) caused by that account's own request (or by one with no principal) does: a public event is read by any caller and sent to every subscribed
 * webhook, a staff-only one to every member of staff, and neither may show one caller's
 * request to others (decisions.md, issue 28).
 */
export function carriesRequestIdentifiers(audience: EventAudience, actorAccountId: number | null = null): boolean {
  // Staff acting on a customer's order (advance, cancel) cause an event of that account: the
  // request is staff's, not the customer's, so it is not shown to them either (probe 28).
  // A request with no principal (a sign-up) is the new account's own.
  return typeof audience === 'object' && (actorAccountId === null || actorAccountId === audience.accountId);
}
