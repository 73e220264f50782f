import type { Principal } from '../../kernel/principal.js';
import { ClosedHours } from '../../kernel/closed-hours.js';
import type { DeliveryInsightsRepository, FailedAttempt, ObjectDelivery } from './delivery-insights.repository.js';

export type { FailedAttempt, ObjectDelivery } from './delivery-insights.repository.js';

/** Attempts made in a window: how many, how many delivered, and the 95th percentile of their latency. */
export interface AttemptStats {
  attempts: number;
  delivered: number;
  /** Nearest rank; null when there was no attempt. */
  p95LatencyMs: number | null;
}

/** One hour's attempts: counts, and the latencies (sorted) the window's percentile is taken over. */
interface HourOfAttempts {
  attempts: number;
  delivered: number;
  latencies: number[];
}

/** The 95th percentile by nearest rank: the smallest value at least 95% of them are at or under. */
export function p95(sorted: readonly number[]): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.ceil(0.95 * sorted.length) - 1]!;
}

/** Whose deliveries a principal reads: their account's webhooks, or every account's for staff. */
const accountOf = (principal: Principal): number | null => (principal.role === 'admin' ? null : principal.accountId);

/**
 * How deliveries went, summed for the dashboard's order page and overview (issue 31): the
 * deliveries of one object's events, and the attempt log over a window. Callers see their
 * own webhooks' attempts; staff every account's.
 */
export class DeliveryInsightsService {
  /** Closed hours' attempts per reader's scope (kernel/closed-hours.ts): a view reads the open hour alone. */
  readonly #hours = new ClosedHours<HourOfAttempts>();

  constructor(private readonly repository: DeliveryInsightsRepository) {}

  /** The deliveries of every event about `object` (an order: `{ type: 'order', id: '42' }`), oldest first. */
  deliveriesOf(principal: Principal, object: { type: string; id: string }): Promise<ObjectDelivery[]> {
    return this.repository.deliveriesOfObject(accountOf(principal), object);
  }

  /** Attempts made in the hours from `from` (an hour's start) to `to` (ISO instants, UTC). */
  async stats(principal: Principal, from: string, to: string): Promise<AttemptStats> {
    const accountId = accountOf(principal);
    const read = async (readFrom: number, readTo: number) => {
      const byHour = await this.repository.attemptsByHour(accountId, new Date(readFrom).toISOString(), new Date(readTo).toISOString());
      return new Map(
        [...byHour].map(([hour, attempts]) => [hour, { attempts: attempts.length, delivered: attempts.filter((a) => a.delivered).length, latencies: attempts.map((a) => a.latencyMs).sort((a, b) => a - b) }]),
      );
    };
    const hours = [...(await this.#hours.hours(String(accountId ?? '*'), Date.parse(from), Date.parse(to), read, () => ({ attempts: 0, delivered: 0, latencies: [] }))).values()];
    const latencies = hours.flatMap((hour) => hour.latencies).sort((a, b) => a - b);
    return { attempts: latencies.length, delivered: hours.reduce((sum, hour) => sum + hour.delivered, 0), p95LatencyMs: p95(latencies) };
  }

  /** The newest attempts that did not deliver, newest first. */
  recentFailures(principal: Principal, limit: number): Promise<FailedAttempt[]> {
    return this.repository.recentFailures(accountOf(principal), Math.min(Math.max(limit, 1), 50));
  }
}
