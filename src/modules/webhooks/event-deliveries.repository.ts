import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import type { DeliveryState } from './webhook.table.js';

/** A webhook's delivery of one event as the event's page shows it. */
export interface EventDelivery {
  deliveryId: number;
  webhookId: number;
  state: DeliveryState;
  attempts: number;
  updatedAt: string;
}

/** What a resend did: a delivery queued (new, or a settled one started again), or one already pending left to its schedule. */
export type ResendOutcome = 'queued' | 'pending';

/**
 * The deliveries of one event across webhooks (the dashboard's event page), and a resend of it
 * to one webhook: one delivery per (webhook, event), so a resend inserts it when there is none
 * and otherwise starts the settled one again with a fresh schedule.
 */
export class EventDeliveriesRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** In `executor` (a resend's transaction: SQLite has one connection, which it holds). */
  async ofEvent(executor: Kysely<DB>, outboxId: number, webhookIds: readonly number[]): Promise<Map<number, EventDelivery>> {
    if (webhookIds.length === 0) return new Map();
    const rows = await executor
      .selectFrom('webhook_deliveries')
      .select(['id', 'webhook_id', 'state', 'attempts', 'updated_at'])
      .where('outbox_id', '=', outboxId)
      .where('webhook_id', 'in', [...webhookIds])
      .execute();
    return new Map(rows.map((row) => [Number(row.webhook_id), { deliveryId: Number(row.id), webhookId: Number(row.webhook_id), state: row.state, attempts: Number(row.attempts), updatedAt: toIso(row.updated_at) }]));
  }

  /** The webhooks (of these candidates or not) that have a delivery of this event: staff see them whoever owns them. */
  async webhooksWithDelivery(outboxId: number, limit: number): Promise<number[]> {
    const rows = await this.db.selectFrom('webhook_deliveries').select('webhook_id').where('outbox_id', '=', outboxId).orderBy('webhook_id').limit(limit).execute();
    return rows.map((row) => Number(row.webhook_id));
  }

  /** In the caller's transaction: a new pending delivery due now, or the settled one re-queued; a pending one is left alone. */
  async resend(trx: Transaction<DB>, webhookId: number, event: { outboxId: number; eventId: string; type: string }, maxAttempts: number, now: string): Promise<ResendOutcome> {
    const inserted = await trx
      .insertInto('webhook_deliveries')
      .values({ webhook_id: webhookId, outbox_id: event.outboxId, event_id: event.eventId, event_type: event.type, state: 'pending', attempts: 0, max_attempts: maxAttempts, schedule_start: now, next_attempt_at: now, lease_until: null, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['webhook_id', 'outbox_id']).doNothing())
      .returning('id')
      .execute();
    if (inserted.length > 0) return 'queued';
    const requeued = await trx
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', attempts: 0, schedule_start: now, next_attempt_at: now, lease_until: null, updated_at: now })
      .where('webhook_id', '=', webhookId)
      .where('outbox_id', '=', event.outboxId)
      .where('state', 'in', ['dead', 'delivered'])
      .executeTakeFirst();
    return Number(requeued.numUpdatedRows) > 0 ? 'queued' : 'pending';
  }
}
