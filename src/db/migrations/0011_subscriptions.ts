import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * The cheese-of-the-month subscription: one per customer account. `next_order_at` is when the
 * worker places the next month's order, in the transaction that claims the subscription, so a
 * month's order is placed exactly once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('subscriptions'))
    .addColumn('account_id', t.bigint, (c) => c.notNull().unique().references('accounts.id').onDelete('cascade'))
    // active or cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('grams', 'integer', (c) => c.notNull())
    .addColumn('shipping_method', 'text', (c) => c.notNull())
    .addColumn('ship_street', 'text', (c) => c.notNull())
    .addColumn('ship_city', 'text', (c) => c.notNull())
    .addColumn('ship_state', 'text')
    .addColumn('ship_zip', 'text')
    .addColumn('ship_country', 'text', (c) => c.notNull())
    .addColumn('day_of_month', 'integer', (c) => c.notNull())
    .addColumn('next_order_at', t.timestamp)
    .addColumn('last_order_id', t.bigint, (c) => c.references('orders.id').onDelete('set null'))
    // Why the last month's order could not be placed (nothing in stock that suits), if so.
    .addColumn('last_problem', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('subscriptions_due').on('subscriptions').column('next_order_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('subscriptions').execute();
}
