import { Migrator, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import * as initial from './migrations/0001_initial.js';

/** Listed statically so migrations work the same under tsx, tests and any bundler. */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
};

/** `schema`: the PostgreSQL schema in use, so the migrator's own tables are looked up there. */
export async function migrateToLatest(db: Kysely<unknown>, schema?: string): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
