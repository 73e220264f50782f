import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Webhooks (decisions.md §8): subscriptions, one delivery per (webhook, event) with its retry
 * state, and the attempt log. Outbox rows learn who may receive them (`audience`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  // `public` (catalogue), `account:<id>` (that account and staff), `staff`. Rows written before
  // webhooks existed had no subscriber: staff is the least they may be shown to.
  await db.schema.alterTable('outbox').addColumn('audience', 'text', (c) => c.notNull().defaultTo('staff')).execute();

  await t
    .idColumn(db.schema.createTable('webhooks'))
    .addColumn('account_id', t.bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    // JSON array of kinds and patterns (`order.*`, `*`)
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('max_attempts', 'integer', (c) => c.notNull().check(sql`max_attempts in (5, 6)`))
    // The registering credential's scopes that decide which events it may receive
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('active', t.boolean, (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    // AES-256-GCM under a key derived from APP_SECRET: the secret must be recoverable to sign
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_secret_expires_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_account_idx').on('webhooks').columns(['account_id', 'id']).execute();

  await t
    .idColumn(db.schema.createTable('webhook_deliveries'))
    .addColumn('webhook_id', t.bigint, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('outbox_id', t.bigint, (c) => c.notNull().references('outbox.id'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // pending, delivered, dead
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'delivered', 'dead')`))
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    // Offsets of the retry schedule count from here: the fan-out, or the replay
    .addColumn('schedule_start', t.timestamp, (c) => c.notNull())
    .addColumn('next_attempt_at', t.timestamp, (c) => c.notNull())
    // Set by the instance sending it: until then, no other instance may claim it
    .addColumn('lease_until', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('webhook_deliveries_webhook_event', ['webhook_id', 'outbox_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_outbox_idx').on('webhook_deliveries').column('outbox_id').execute();

  await t
    .idColumn(db.schema.createTable('webhook_attempts'))
    .addColumn('delivery_id', t.bigint, (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', t.bigint, (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    // delivered, failed (another attempt follows), dead_lettered (the last one failed)
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('delivered', 'failed', 'dead_lettered')`))
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('next_attempt_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_attempts_webhook_idx').on('webhook_attempts').columns(['webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').column('delivery_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhooks']) await db.schema.dropTable(table).execute();
  await db.schema.alterTable('outbox').dropColumn('audience').execute();
}
