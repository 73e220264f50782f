import type { Kysely } from 'kysely';

/**
 * The resource a keyed request created, written in the transaction that created it: a retry
 * whose first request died between its commit and its answer finds the resource here and is
 * answered with it, instead of creating it again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('created_resource', 'text').execute();
}
