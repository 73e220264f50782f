import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Orders (decisions.md §5). Money in integer cents, quantities in grams. Items keep the
 * cheese's name and price at placement; the cheese link goes null if the cheese is deleted.
 * An order outlives its customer's account, anonymised (account link null).
 * `next_step_at` is when the lifecycle worker is due to move the order on: due work lives in
 * the database, so a restart neither loses nor repeats a step.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  await t
    .idColumn(db.schema.createTable('orders'))
    .addColumn('account_id', t.bigint, (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('shipping_method', 'text', (c) => c.notNull())
    .addColumn('shipping_fee_cents', t.bigint, (c) => c.notNull())
    .addColumn('items_cents', t.bigint, (c) => c.notNull())
    .addColumn('total_cents', t.bigint, (c) => c.notNull())
    .addColumn('ship_street', 'text', (c) => c.notNull())
    .addColumn('ship_city', 'text', (c) => c.notNull())
    .addColumn('ship_state', 'text')
    .addColumn('ship_zip', 'text')
    .addColumn('ship_country', 'text', (c) => c.notNull())
    .addColumn('notes', 'text')
    .addColumn('payment_reference', 'text')
    .addColumn('carrier', 'text')
    .addColumn('tracking_number', 'text')
    .addColumn('ship_date', t.timestamp)
    .addColumn('estimated_delivery', t.timestamp)
    .addColumn('next_step_at', t.timestamp)
    // The last event's metadata.sequence for this order.
    .addColumn('event_sequence', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('orders_account_created').on('orders').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('orders_next_step').on('orders').column('next_step_at').execute();
  await t
    .idColumn(db.schema.createTable('order_items'))
    .addColumn('order_id', t.bigint, (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('cheese_id', t.bigint, (c) => c.references('cheeses.id').onDelete('set null'))
    .addColumn('cheese_slug', 'text', (c) => c.notNull())
    .addColumn('cheese_name', 'text', (c) => c.notNull())
    .addColumn('grams', 'integer', (c) => c.notNull())
    .addColumn('price_cents', t.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('order_items_order').on('order_items').columns(['order_id', 'position']).execute();
  await db.schema.createIndex('order_items_cheese').on('order_items').column('cheese_id').execute();
  await t
    .idColumn(db.schema.createTable('order_status_changes'))
    .addColumn('order_id', t.bigint, (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    // customer, staff or system (the lifecycle worker, a deleted cheese)
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('order_status_changes_order').on('order_status_changes').columns(['order_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('order_status_changes').execute();
  await db.schema.dropTable('order_items').execute();
  await db.schema.dropTable('orders').execute();
}
