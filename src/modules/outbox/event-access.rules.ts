import type { Scope } from '../../kernel/scopes.js';
import type { EventType } from './outbox.writer.js';

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
