import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * How deliveries stand, for others (issue 21): the event log's `pending_webhooks` and
 * `delivery_success=false` (DeliveryStatusPort), and the outbox's prune, which keeps every
 * row a kept delivery points at (OutboxRetainer). Read-only.
 */
export class DeliveryStatusRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** The lowest outbox id a kept delivery points at (one step along webhook_deliveries_outbox_idx). */
  async lowestOutboxId(): Promise<number | null> {
    const row = await this.db.selectFrom('webhook_deliveries').select('outbox_id').orderBy('outbox_id').limit(1).executeTakeFirst();
    return row ? Number(row.outbox_id) : null;
  }

  /**
   * For the event log: per event, how many of its deliveries are not delivered yet (pending or
   * dead-lettered), counting only `accountId`'s webhooks (null: every account's, for staff).
   */
  async undeliveredCounts(outboxIds: readonly number[], accountId: number | null): Promise<Map<number, number>> {
    if (outboxIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('webhook_deliveries as d')
      .$if(accountId !== null, (q) => q.where('d.webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('account_id', '=', accountId!)))
      .where('d.outbox_id', 'in', [...outboxIds])
      .where('d.state', '<>', 'delivered')
      .groupBy('d.outbox_id')
      .select((eb) => ['d.outbox_id', eb.fn.countAll().as('count')])
      .execute();
    return new Map(rows.map((row) => [Number(row.outbox_id), Number(row.count)]));
  }

  /** The outbox ids, newest first (at most `limit`), with a delivery not delivered yet, of `accountId`'s webhooks (null: any). */
  async undeliveredOutboxIds(accountId: number | null, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries as d')
      .$if(accountId !== null, (q) => q.where('d.webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('account_id', '=', accountId!)))
      .where('d.state', 'in', ['pending', 'dead'])
      .select('d.outbox_id')
      .distinct()
      .orderBy('d.outbox_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => Number(row.outbox_id));
  }
}
