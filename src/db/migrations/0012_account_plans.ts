import { sql, type Kysely } from 'kysely';

/** The rate-limit plan of each account (decisions.md §7): Free by default, staff on Enterprise. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free').check(sql`plan in ('free', 'pro', 'enterprise')`))
    .execute();
  await sql`update accounts set plan = 'enterprise' where role = 'admin'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('plan').execute();
}
