import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

// cheese_images.deleted_at was filtered on and never written: images go with their cheese
// (ON DELETE CASCADE) and are never soft-deleted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cheese_images').dropColumn('deleted_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cheese_images').addColumn('deleted_at', columnTypes(db).timestamp).execute();
}
