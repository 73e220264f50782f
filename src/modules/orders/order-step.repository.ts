import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { isPostgres } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import type { OrderStatus, ShippingMethod } from './order.table.js';

/** What the lifecycle worker needs of a claimed order to make its step's outside call. */
export interface ClaimedStep {
  id: number;
  status: OrderStatus;
  paymentReference: string | null;
  totalCents: number;
  shippingMethod: ShippingMethod;
  shipCountry: string;
}

/**
 * The database's clock plus `seconds`, in the column's form (ISO text on SQLite, timestamptz on
 * PostgreSQL): every instance schedules and compares steps on this one clock, so a skewed
 * instance clock neither takes a step early nor steals a lease still running.
 */
function databaseNowPlus(executor: Kysely<DB>, seconds: number): RawBuilder<string> {
  return isPostgres(executor)
    ? sql<string>`now() + cast(${seconds} as double precision) * interval '1 second'`
    : sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${`${seconds >= 0 ? '+' : ''}${seconds} seconds`})`;
}

/** The lifecycle's due steps and their leases (`orders.next_step_at`), on the database's clock. */
export class OrderStepRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Claims the most overdue step (due by `at`, else by the database's clock) in its own short
   * transaction, leasing it for `leaseSeconds`: `next_step_at` moves to the lease's end, so no
   * instance takes it meanwhile, and it is due again by itself if this one dies mid-call.
   */
  claimDue(at: string | undefined, leaseSeconds: number): Promise<ClaimedStep | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const query = trx
        .selectFrom('orders')
        .select(['id', 'status', 'payment_reference', 'total_cents', 'shipping_method', 'ship_country'])
        .where('next_step_at', '<=', at ?? databaseNowPlus(trx, 0))
        .orderBy('next_step_at')
        .limit(1);
      const row = await (isPostgres(trx) ? query.forUpdate().skipLocked() : query).executeTakeFirst();
      if (!row) return undefined;
      await trx.updateTable('orders').set({ next_step_at: databaseNowPlus(trx, leaseSeconds) }).where('id', '=', row.id).execute();
      return { id: Number(row.id), status: row.status, paymentReference: row.payment_reference, totalCents: Number(row.total_cents), shippingMethod: row.shipping_method, shipCountry: row.ship_country };
    });
  }

  /** The order's next step falls due `seconds` from now on the database's clock; null: none. */
  async schedule(trx: Transaction<DB>, orderId: number, seconds: number | null): Promise<void> {
    await trx
      .updateTable('orders')
      .set({ next_step_at: seconds === null ? null : databaseNowPlus(trx, seconds) })
      .where('id', '=', orderId)
      .execute();
  }

  /** Nothing left to do for it (a cancelled order's payment voided). */
  async clear(orderId: number): Promise<void> {
    await this.db.updateTable('orders').set({ next_step_at: null }).where('id', '=', orderId).execute();
  }
}
