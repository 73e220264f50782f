import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { isPostgres } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { columnsExcept } from '../../db/table-columns.js';
import { SUBSCRIPTION_COLUMNS, type SubscriptionTable } from './subscription.table.js';

export type SubscriptionRecord = Selectable<SubscriptionTable>;

const COLUMNS = columnsExcept(SUBSCRIPTION_COLUMNS, []);

export class SubscriptionRepository {
  async ofAccount(executor: Kysely<DB>, accountId: number): Promise<SubscriptionRecord | undefined> {
    return executor.selectFrom('subscriptions').select(COLUMNS).where('account_id', '=', accountId).executeTakeFirst();
  }

  /** Creates or replaces the account's subscription in one statement (two at once cannot both insert); says which. */
  async save(trx: Transaction<DB>, row: Insertable<SubscriptionTable>): Promise<'created' | 'replaced'> {
    const existed = (await trx.selectFrom('subscriptions').select('id').where('account_id', '=', row.account_id).executeTakeFirst()) !== undefined;
    const { created_at: _created, account_id: _account, ...changes } = row;
    await trx.insertInto('subscriptions').values(row).onConflict((conflict) => conflict.column('account_id').doUpdateSet(changes)).execute();
    return existed ? 'replaced' : 'created';
  }

  async update(executor: Kysely<DB>, id: number, changes: Updateable<SubscriptionTable>): Promise<void> {
    await executor.updateTable('subscriptions').set(changes).where('id', '=', id).execute();
  }

  /** The active subscription due first, read without a lock (claimDue confirms it). */
  async nextDue(executor: Kysely<DB>, now: string): Promise<SubscriptionRecord | undefined> {
    return executor.selectFrom('subscriptions').select(COLUMNS).where('status', '=', 'active').where('next_order_at', '<=', now).orderBy('next_order_at').limit(1).executeTakeFirst();
  }

  /** That subscription if it is still active and due, locked; skipped (undefined) while another worker holds it (PostgreSQL). */
  async claimDue(trx: Transaction<DB>, now: string, id: number): Promise<SubscriptionRecord | undefined> {
    const query = trx.selectFrom('subscriptions').select(COLUMNS).where('id', '=', id).where('status', '=', 'active').where('next_order_at', '<=', now);
    return (isPostgres(trx) ? query.forUpdate().skipLocked() : query).executeTakeFirst();
  }
}
