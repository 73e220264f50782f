import type { Principal } from '../../kernel/principal.js';
import type { AttemptStats, DeliveryInsightsRepository, FailedAttempt, ObjectDelivery } from './delivery-insights.repository.js';

export type { AttemptStats, FailedAttempt, ObjectDelivery } from './delivery-insights.repository.js';

/** Whose deliveries a principal reads: their account's webhooks, or every account's for staff. */
const accountOf = (principal: Principal): number | null => (principal.role === 'admin' ? null : principal.accountId);

/**
 * How deliveries went, summed for the dashboard's order page and overview (issue 31): the
 * deliveries of one object's events, and the attempt log over a window. Callers see their
 * own webhooks' attempts; staff every account's.
 */
export class DeliveryInsightsService {
  constructor(private readonly repository: DeliveryInsightsRepository) {}

  /** The deliveries of every event about `object` (an order: `{ type: 'order', id: '42' }`), oldest first. */
  deliveriesOf(principal: Principal, object: { type: string; id: string }): Promise<ObjectDelivery[]> {
    return this.repository.deliveriesOfObject(accountOf(principal), object);
  }

  /** Attempts made in [from, to) (ISO instants, UTC). */
  stats(principal: Principal, from: string, to: string): Promise<AttemptStats> {
    return this.repository.stats(accountOf(principal), from, to);
  }

  /** The newest attempts that did not deliver, newest first. */
  recentFailures(principal: Principal, limit: number): Promise<FailedAttempt[]> {
    return this.repository.recentFailures(accountOf(principal), Math.min(Math.max(limit, 1), 50));
  }
}
