import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import { FirstIdAtOrAfter } from '../../db/first-id.js';
import type { AttemptOutcome, DeliveryState } from './webhook.table.js';
import type { OutboxEventsPort } from './webhooks.ports.js';

/** One delivery of an event to a webhook, with its latest attempt (none yet: nulls). */
export interface ObjectDelivery {
  deliveryId: number;
  webhookId: number;
  webhookUrl: string;
  eventId: string;
  eventType: string;
  state: DeliveryState;
  attempts: number;
  lastAttempt: { id: number; outcome: AttemptOutcome; statusCode: number | null; latencyMs: number; createdAt: string } | null;
}

export interface FailedAttempt {
  id: number;
  webhookId: number;
  eventId: string;
  eventType: string;
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
  createdAt: string;
}

const HOUR_MS = 3_600_000;
/** How far out of order attempts' times may be (several dispatchers, clocks within the second). */
const ARRIVAL_SLACK_MS = 60_000;

/** Most deliveries one object's events list (a busy order has a handful of events times a few webhooks). */
const MAX_OBJECT_DELIVERIES = 100;

/**
 * The reads behind the dashboard's pictures of delivery (issue 31): the deliveries of one
 * object's events, and the attempt log summed over a window. `accountId` null: every account's
 * (staff). Only this deployment's environment's events, as every read of the attempt log.
 */
export class DeliveryInsightsRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly events: OutboxEventsPort,
  ) {
    this.#firstIds = new FirstIdAtOrAfter(db, 'webhook_attempts');
  }

  async deliveriesOfObject(accountId: number | null, object: { type: string; id: string }): Promise<ObjectDelivery[]> {
    let query = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.id', 'd.webhook_id', 'w.url', 'd.event_id', 'd.event_type', 'd.state', 'd.attempts'])
      .where('d.outbox_id', 'in', this.events.selected({ object }));
    if (accountId !== null) query = query.where('w.account_id', '=', accountId);
    const rows = await query.orderBy('d.id').limit(MAX_OBJECT_DELIVERIES).execute();
    if (rows.length === 0) return [];
    const attempts = await this.db
      .selectFrom('webhook_attempts')
      .select(['id', 'delivery_id', 'outcome', 'status_code', 'latency_ms', 'created_at'])
      .where('delivery_id', 'in', rows.map((row) => Number(row.id)))
      .orderBy('id')
      .execute();
    const latest = new Map(attempts.map((a) => [Number(a.delivery_id), a]));
    return rows.map((row) => {
      const last = latest.get(Number(row.id));
      return {
        deliveryId: Number(row.id),
        webhookId: Number(row.webhook_id),
        webhookUrl: row.url,
        eventId: row.event_id,
        eventType: row.event_type,
        state: row.state,
        attempts: row.attempts,
        lastAttempt: last ? { id: Number(last.id), outcome: last.outcome, statusCode: last.status_code, latencyMs: Number(last.latency_ms), createdAt: toIso(last.created_at) } : null,
      };
    });
  }

  /**
   * The outcome and latency of every attempt made in [from, to), by the hour it was made in
   * (epoch ms of the hour's start). No index on the time: ids follow the order attempts are
   * made in, so the window's first id is found by bisecting the primary key, and the read
   * starts there.
   */
  async attemptsByHour(accountId: number | null, from: string, to: string): Promise<Map<number, { delivered: boolean; latencyMs: number }[]>> {
    const firstId = await this.#firstIds.find(new Date(Date.parse(from) - ARRIVAL_SLACK_MS).toISOString());
    const byHour = new Map<number, { delivered: boolean; latencyMs: number }[]>();
    if (firstId === null) return byHour;
    const rows = await this.#window(accountId, from, to).where('a.id', '>=', firstId).select(['a.created_at', 'a.outcome', 'a.latency_ms']).execute();
    for (const row of rows) {
      const hour = Math.floor(Date.parse(toIso(row.created_at)) / HOUR_MS) * HOUR_MS;
      const list = byHour.get(hour) ?? byHour.set(hour, []).get(hour)!;
      list.push({ delivered: row.outcome === 'delivered', latencyMs: Number(row.latency_ms) });
    }
    return byHour;
  }

  /** The window's first id, bisected on the ids (src/db/first-id.ts): no index on created_at. */
  readonly #firstIds: FirstIdAtOrAfter;

  /** The newest attempts that did not deliver (failed, or the last before a dead letter). */
  async recentFailures(accountId: number | null, limit: number): Promise<FailedAttempt[]> {
    let query = this.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(['a.id', 'a.webhook_id', 'a.event_id', 'a.event_type', 'a.outcome', 'a.status_code', 'a.error', 'a.created_at'])
      .where('a.outcome', 'in', ['failed', 'dead_lettered'])
      .where('d.outbox_id', 'in', this.events.selected({}));
    if (accountId !== null) query = query.where('a.webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('account_id', '=', accountId));
    const rows = await query.orderBy('a.id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      id: Number(row.id),
      webhookId: Number(row.webhook_id),
      eventId: row.event_id,
      eventType: row.event_type,
      outcome: row.outcome,
      statusCode: row.status_code,
      error: row.error,
      createdAt: toIso(row.created_at),
    }));
  }

  #window(accountId: number | null, from: string, to: string) {
    let query = this.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('a.created_at', '>=', from)
      .where('a.created_at', '<', to)
      .where('d.outbox_id', 'in', this.events.selected({}));
    if (accountId !== null) query = query.where('a.webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('account_id', '=', accountId));
    return query;
  }
}
