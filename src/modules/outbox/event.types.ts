/** The kinds of event and who may receive them: shared by the writer and the access rules. */
export const EVENT_TYPES = [
  'order.placed',
  'order.confirmed',
  'order.shipped',
  'order.delivered',
  'order.cancelled',
  'cheese.back_in_stock',
  'cheese.low_stock',
  'cheese.out_of_stock',
  'cheese.new_arrival',
  'customer.created',
  'customer.updated',
  'customer.subscription_changed',
  'webhook.test',
  'api_key.expiring',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Who may receive an event by webhook: everyone (`public`: the catalogue), one account and
 * staff (`{ accountId }`: its orders, profile, keys), or staff only.
 */
export type EventAudience = 'public' | 'staff' | { accountId: number };

export function audienceText(audience: EventAudience): string {
  return typeof audience === 'string' ? audience : `account:${audience.accountId}`;
}
