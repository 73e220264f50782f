import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest, migrations } from '../../src/db/migrate.js';
import { openTestDatabase } from '../helpers/database.js';

/** Data migrations rewrite what earlier code stored: run them over rows written the old way. */
let database: Database;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ database, dispose } = await openTestDatabase());
});
afterAll(() => dispose());

describe('0003_search_tokens', () => {
  it('recomputes search_text of existing cheeses so words of every script become searchable', async () => {
    const db = database.db as never;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(database.schema ? { migrationTableSchema: database.schema } : {}) });
    const to0002 = await migrator.migrateTo('0002_drop_image_deleted_at');
    expect(to0002.error).toBeUndefined();
    const now = new Date().toISOString();
    // As the foundation stored it: only [a-z0-9] survived.
    await sql`insert into cheeses (slug, name, name_key, sort_name, search_text, status, origin, created_at, updated_at)
              values ('brynza', 'Брынза', 'брынза', '', '', 'available', 'Россия', ${now}, ${now})`.execute(database.db);
    await migrateToLatest(db, database.schema);
    const row = await database.db.selectFrom('cheeses').select(['search_text', 'sort_name']).where('slug', '=', 'brynza').executeTakeFirstOrThrow();
    expect(row).toEqual({ search_text: 'брынза россия', sort_name: 'брынза' });
  });
});
