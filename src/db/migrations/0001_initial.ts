import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);

  await t
    .idColumn(db.schema.createTable('accounts'))
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text')
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('customer', 'admin')`))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await t
    .idColumn(db.schema.createTable('api_keys'))
    .addColumn('account_id', t.bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('live', 'test')`))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', t.timestamp)
    .addColumn('last_used_at', t.timestamp)
    .addColumn('revoked_at', t.timestamp)
    // When api_key.expiring was recorded for this key (once, 7 days ahead).
    .addColumn('expiry_notified_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_expiry_idx').on('api_keys').columns(['expires_at']).execute();
  await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute();

  await t
    .idColumn(db.schema.createTable('categories'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await t
    .idColumn(db.schema.createTable('tags'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  await t
    .idColumn(db.schema.createTable('cheeses'))
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    // foldCase(name): case-insensitive uniqueness without relying on SQL lower().
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('sort_name', 'text', (c) => t.sortText(c.notNull()))
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('category_id', t.bigint, (c) => c.references('categories.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('available', 'pending', 'sold')`))
    .addColumn('origin', 'text')
    .addColumn('origin_key', 'text')
    .addColumn('region', 'text')
    .addColumn('producer', 'text')
    .addColumn('milk', 'text')
    .addColumn('pasteurized', t.boolean)
    .addColumn('texture', 'text')
    .addColumn('rind', 'text')
    .addColumn('aged_weeks', 'integer')
    .addColumn('tasting_notes', 'text')
    .addColumn('stinkiness_rating', 'integer')
    .addColumn('serving_temp_min', 'integer')
    .addColumn('serving_temp_max', 'integer')
    .addColumn('pairings', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('seasonal', t.boolean, (c) => c.notNull().defaultTo(sql`${sql.raw(t.postgres ? 'false' : '0')}`))
    .addColumn('available_months_mask', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('aging_profile', 'text')
    .addColumn('organic', t.boolean, (c) => c.notNull().defaultTo(sql`${sql.raw(t.postgres ? 'false' : '0')}`))
    .addColumn('price_cents', t.bigint)
    .addColumn('stock_grams', t.bigint, (c) => c.notNull().defaultTo(0).check(sql`stock_grams >= 0`))
    .addColumn('photo_urls', 'text', (c) => c.notNull().defaultTo('[]'))
    // Year-month (`2026-09`) whose seasonal window opening was last announced; see SeasonService.
    .addColumn('season_announced', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  // "Unique within its category": an uncategorised cheese competes with the other uncategorised ones.
  await sql`create unique index cheeses_category_name_uq on cheeses ((coalesce(category_id, 0)), name_key)`.execute(db);
  await db.schema.createIndex('cheeses_origin_idx').on('cheeses').columns(['origin_key', 'id']).execute();
  // Keyset pagination indexes: each sort key followed by the id tie-breaker.
  await db.schema.createIndex('cheeses_sort_name_idx').on('cheeses').columns(['sort_name', 'id']).execute();
  await db.schema.createIndex('cheeses_created_idx').on('cheeses').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('cheeses_updated_idx').on('cheeses').columns(['updated_at', 'id']).execute();
  await db.schema.createIndex('cheeses_status_name_idx').on('cheeses').columns(['status', 'sort_name', 'id']).execute();

  await db.schema
    .createTable('cheese_tags')
    .addColumn('cheese_id', t.bigint, (c) => c.notNull().references('cheeses.id').onDelete('cascade'))
    .addColumn('tag_id', t.bigint, (c) => c.notNull().references('tags.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('cheese_tags_pk', ['cheese_id', 'tag_id'])
    .execute();
  await db.schema.createIndex('cheese_tags_tag_idx').on('cheese_tags').columns(['tag_id', 'cheese_id']).execute();

  await t
    .idColumn(db.schema.createTable('cheese_images'))
    .addColumn('cheese_id', t.bigint, (c) => c.notNull().references('cheeses.id').onDelete('cascade'))
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('thumbnail_key', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('caption', 'text')
    .addColumn('is_primary', t.boolean, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('deleted_at', t.timestamp)
    .execute();
  await db.schema.createIndex('cheese_images_cheese_idx').on('cheese_images').columns(['cheese_id', 'id']).execute();

  await t
    .idColumn(db.schema.createTable('outbox'))
    .addColumn('event_id', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('aggregate_type', 'text', (c) => c.notNull())
    .addColumn('aggregate_id', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('dispatched_at', t.timestamp)
    .execute();
  await db.schema.createIndex('outbox_undispatched_idx').on('outbox').columns(['dispatched_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['outbox', 'cheese_images', 'cheese_tags', 'cheeses', 'tags', 'categories', 'api_keys', 'accounts']) {
    await db.schema.dropTable(table).execute();
  }
}
