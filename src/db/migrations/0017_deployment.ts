import type { Kysely } from 'kysely';

/**
 * What a database remembers of the deployments that used it, as keys and values: first,
 * `production_since`, written when a production deployment starts on it, so that tools run
 * without CHEESE_ENV=production (the CLI's db:seed) can tell they must not seed sample accounts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('deployment')
    // not null said outright: SQLite lets a text primary key hold null otherwise
    .addColumn('key', 'text', (c) => c.primaryKey().notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deployment').execute();
}
