import { sql, type Kysely } from 'kysely';
import { foldForSearch } from '../../kernel/text.js';

interface Row {
  id: number;
  name: string;
  origin: string | null;
  region: string | null;
  producer: string | null;
}

const BATCH = 500;

/**
 * search_text and sort_name kept only [a-z0-9], so words of other scripts (Брынза, Φέτα,
 * ゴーダ) were not searchable and such names all sorted first, as empty. Both are recomputed
 * for every cheese with the Unicode folding the service now uses, a batch at a time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Ids ascending: nothing else writes during a migration, so no row can be passed over.
  for (let after = 0; ; ) {
    const rows = (await sql<Row>`select id, name, origin, region, producer from cheeses where id > ${after} order by id limit ${BATCH}`.execute(db)).rows;
    for (const row of rows) {
      const searchText = foldForSearch([row.name, row.origin, row.region, row.producer].filter(Boolean).join(' '));
      await sql`update cheeses set search_text = ${searchText}, sort_name = ${foldForSearch(row.name)} where id = ${row.id}`.execute(db);
    }
    if (rows.length < BATCH) return;
    after = Number(rows.at(-1)!.id);
  }
}

export async function down(): Promise<void> {
  // The old values were a lossy subset of the new ones; nothing to undo.
}
