import type { Kysely } from 'kysely';

/**
 * The request log names the request's trace (docs/operations.md, "Traces"): null when tracing
 * was off, so an entry leads to its spans in the tracing backend.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('trace_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('trace_id').execute();
}
