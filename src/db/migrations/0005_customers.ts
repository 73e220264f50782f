import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Customers: case-insensitive unique usernames and e-mail addresses on accounts, and the
 * customer profile (Form A's Customer fields beyond the credentials).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = columnTypes(db);
  // Usernames are ASCII ([A-Za-z0-9_.-]), so SQL lower() folds them the same on both dialects.
  await db.schema.alterTable('accounts').addColumn('username_key', 'text', (c) => c.notNull().defaultTo('')).execute();
  await sql`update accounts set username_key = lower(username)`.execute(db);
  await db.schema.createIndex('accounts_username_key_uq').unique().on('accounts').column('username_key').execute();
  await db.schema.alterTable('accounts').addColumn('email_key', 'text').execute();
  await sql`update accounts set email_key = lower(email) where email is not null`.execute(db);
  await db.schema.createIndex('accounts_email_key_uq').unique().on('accounts').column('email_key').execute();

  await db.schema
    .createTable('customer_profiles')
    .addColumn('account_id', t.bigint, (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('phone', 'text')
    .addColumn('customer_status', 'text', (c) => c.notNull().defaultTo('bronze').check(sql`customer_status in ('bronze', 'silver', 'gold', 'platinum')`))
    // By reference: the cheese; its name is kept too, so a deleted cheese leaves the favourite by name.
    .addColumn('favourite_cheese_id', t.bigint, (c) => c.references('cheeses.id').onDelete('set null'))
    .addColumn('favourite_cheese_name', 'text')
    // JSON: the preference profile and the milk allergies (GET/PUT /customer/{username}/preferences).
    .addColumn('preferences', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await t
    .idColumn(db.schema.createTable('customer_addresses'))
    .addColumn('account_id', t.bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('label', 'text')
    .addColumn('recipient', 'text')
    .addColumn('line1', 'text', (c) => c.notNull())
    .addColumn('line2', 'text')
    .addColumn('city', 'text', (c) => c.notNull())
    .addColumn('region', 'text')
    .addColumn('postal_code', 'text')
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('phone', 'text')
    .addColumn('is_default', t.boolean, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('customer_addresses_account_idx').on('customer_addresses').columns(['account_id', 'id']).execute();
  // One default address per customer, enforced by the database too.
  await sql`create unique index customer_addresses_default_uq on customer_addresses (account_id) where is_default = ${sql.raw(t.postgres ? 'true' : '1')}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('customer_addresses').execute();
  await db.schema.dropTable('customer_profiles').execute();
  await db.schema.dropIndex('accounts_email_key_uq').execute();
  await db.schema.alterTable('accounts').dropColumn('email_key').execute();
  await db.schema.dropIndex('accounts_username_key_uq').execute();
  await db.schema.alterTable('accounts').dropColumn('username_key').execute();
}
