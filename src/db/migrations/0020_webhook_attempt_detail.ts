import { sql, type Kysely } from 'kysely';

/**
 * An attempt's detail (issue 19, the dashboard's deliveries page): the headers sent (the
 * signatures, never the secret), the first 4 KB of the receiver's answer and the class of
 * error. The body sent is not stored: it is rebuilt from the outbox row, which a delivery
 * keeps as long as its attempts exist. Attempts made before this have nulls.
 *
 * The dead letter queue, per webhook and across the caller's, pages newest first over
 * dead-lettered deliveries: two partial indexes hold those rows only, so keeping them costs
 * nothing while a delivery is pending or delivered.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_attempts').addColumn('request_headers', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('response_body', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('error_class', 'text').execute();
  await db.schema.createIndex('webhook_deliveries_dead_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).where(sql.ref('state'), '=', 'dead').execute();
  await db.schema.createIndex('webhook_deliveries_dead_idx').on('webhook_deliveries').column('id').where(sql.ref('state'), '=', 'dead').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_dead_idx').execute();
  await db.schema.dropIndex('webhook_deliveries_dead_webhook_idx').execute();
  await db.schema.alterTable('webhook_attempts').dropColumn('error_class').execute();
  await db.schema.alterTable('webhook_attempts').dropColumn('response_body').execute();
  await db.schema.alterTable('webhook_attempts').dropColumn('request_headers').execute();
}
