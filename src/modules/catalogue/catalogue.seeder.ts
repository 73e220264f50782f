import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { Compile } from 'typebox/compile';
import type { DB } from '../../db/schema.js';
import { CheeseInput } from './cheese.schema.js';
import { applyInput, emptyDraft } from './cheese.input.js';
import type { CheeseRepository } from './cheese.repository.js';
import type { TaxonomyRepository } from './taxonomy.repository.js';

export const SEED_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../seed/cheeses');

interface SeedRecord {
  name: string;
  category: string;
  tags: string[];
  availableMonths: number[] | null;
  [field: string]: unknown;
}

const validator = Compile(CheeseInput);

/** Reads seed/cheeses/*.json into CheeseInput bodies, checked by the same schema as the API. */
export function loadSeedCatalogue(dir = SEED_DIR): Record<string, unknown>[] {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  return files.flatMap((file) => {
    const records = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as SeedRecord[];
    return records.map((record) => {
      const input = { ...record, category: { name: record.category }, tags: record.tags.map((name) => ({ name })), availableMonths: record.availableMonths ?? [] };
      if (!validator.Check(input)) {
        const first = [...validator.Errors(input)][0];
        throw new Error(`seed ${file}: "${record.name}" is invalid at ${first?.instancePath}: ${first?.message}`);
      }
      return input;
    });
  });
}

/**
 * Loads the real catalogue into an empty database. No events: a first load is not a run of
 * new arrivals, and nobody can have subscribed yet.
 */
export class CatalogueSeeder {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly cheeses: CheeseRepository,
    private readonly taxonomy: TaxonomyRepository,
  ) {}

  async seedIfEmpty(): Promise<number> {
    const existing = await this.db.selectFrom('cheeses').select('id').limit(1).executeTakeFirst();
    return existing ? 0 : this.seed();
  }

  async seed(records = loadSeedCatalogue()): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let inserted = 0;
      for (const input of records) {
        const body = input as Parameters<typeof applyInput>[1] & { name: string };
        const draft = applyInput(emptyDraft(body.name), body, { categoryName: (r) => r.name ?? null, tagName: (r) => r.name! });
        const categoryId = draft.categoryName ? await this.taxonomy.ensureCategory(trx, draft.categoryName) : null;
        if (await this.cheeses.nameTaken(trx, categoryId, draft.name, null)) continue;
        const id = await this.cheeses.insert(trx, draft, await this.cheeses.freeSlug(trx, draft.name), categoryId);
        await this.taxonomy.setCheeseTags(trx, id, await this.taxonomy.ensureTags(trx, draft.tagNames));
        inserted++;
      }
      return inserted;
    });
  }
}
