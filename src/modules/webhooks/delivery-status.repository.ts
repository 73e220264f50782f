import type { Kysely, OperandExpression } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';

/** The deliveries still to do or given up on, for the metrics; delivered ones are never counted. */
export interface DeliveryBacklog {
  pending: number;
  /** Pending deliveries whose next attempt is due now (the others wait for their retry's time). */
  due: number;
  /** When the longest-waiting due delivery became due (its next_attempt_at); null when none is due. */
  oldestDueAt: string | null;
  dead: number;
}

/**
 * How deliveries stand, for others (issue 21): the event log's `pending_webhooks` and
 * `delivery_success=false` (DeliveryStatusPort), the outbox's prune, which keeps every row a
 * kept delivery points at (OutboxRetainer), and the metrics' backlog gauges. Read-only.
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
    const rows = await this.#ofAccount(accountId)
      .where('d.outbox_id', 'in', [...outboxIds])
      .where('d.state', '<>', 'delivered')
      .groupBy('d.outbox_id')
      .select((eb) => ['d.outbox_id', eb.fn.countAll().as('count')])
      .execute();
    return new Map(rows.map((row) => [Number(row.outbox_id), Number(row.count)]));
  }

  /**
   * The outbox ids with a delivery not delivered yet (pending or dead-lettered), of `accountId`'s
   * webhooks (null: any), as a subquery the event log's page filters by: one statement however
   * many there are.
   */
  undeliveredOutboxIds(accountId: number | null): OperandExpression<number> {
    return this.#ofAccount(accountId).where('d.state', 'in', ['pending', 'dead']).select('d.outbox_id');
  }

  /**
   * The backlog gauges: pending and dead deliveries by state, with how many pending are due, over
   * `webhook_deliveries_due_idx` and the partial dead index. In the caller's executor: the
   * metrics read it beside the outbox's lag under one statement timeout.
   */
  async backlog(executor: Kysely<DB>, now: string): Promise<DeliveryBacklog> {
    const rows = await executor
      .selectFrom('webhook_deliveries')
      .where('state', 'in', ['pending', 'dead'])
      .groupBy('state')
      .select((eb) => [
        'state',
        eb.fn.countAll().as('count'),
        eb.fn.sum(eb.case().when('next_attempt_at', '<=', now).then(1).else(0).end()).as('due'),
        // The oldest due attempt's time, for the backlog's age (min ignores the nulls of the not-yet-due).
        eb.fn.min(eb.case().when('next_attempt_at', '<=', now).then(eb.ref('next_attempt_at')).end()).as('oldest_due'),
      ])
      .execute();
    const pending = rows.find((row) => row.state === 'pending');
    const oldest = pending?.oldest_due ?? null;
    return {
      pending: Number(pending?.count ?? 0),
      due: Number(pending?.due ?? 0),
      oldestDueAt: oldest === null ? null : toIso(oldest as Date | string),
      dead: Number(rows.find((row) => row.state === 'dead')?.count ?? 0),
    };
  }

  #ofAccount(accountId: number | null) {
    return this.db
      .selectFrom('webhook_deliveries as d')
      .$if(accountId !== null, (q) => q.where('d.webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('account_id', '=', accountId!)));
  }
}
