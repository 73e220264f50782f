import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { foldCase } from './cheese.model.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** Categories and tags: find-or-create by name, and lookups for cheese views. Every method runs on the executor it is given. */
export class TaxonomyRepository {
  constructor(private readonly clock: Clock = systemClock) {}

  async categoryNameById(executor: Kysely<DB>, id: number): Promise<string | undefined> {
    return (await executor.selectFrom('categories').select('name').where('id', '=', id).executeTakeFirst())?.name;
  }

  async tagNamesByIds(executor: Kysely<DB>, ids: number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map();
    const rows = await executor.selectFrom('tags').select(['id', 'name']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** Case-insensitive: "blue" and "Blue" are one category, keeping the first spelling. */
  async ensureCategory(trx: Transaction<DB>, name: string): Promise<number> {
    const existing = await trx
      .selectFrom('categories')
      .select('id')
      .where('name_key', '=', foldCase(name))
      .executeTakeFirst();
    if (existing) return existing.id;
    const now = this.clock.iso();
    const row = await trx
      .insertInto('categories')
      .values({ name, name_key: foldCase(name), created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('name_key').doUpdateSet({ updated_at: now }))
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async ensureTags(trx: Transaction<DB>, names: string[]): Promise<number[]> {
    if (names.length === 0) return [];
    const now = this.clock.iso();
    await trx
      .insertInto('tags')
      .values(names.map((name) => ({ name, created_at: now })))
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const rows = await trx.selectFrom('tags').select(['id', 'name']).where('name', 'in', names).execute();
    const byName = new Map(rows.map((r) => [r.name, r.id]));
    return names.map((n) => byName.get(n)!);
  }

  async setCheeseTags(trx: Transaction<DB>, cheeseId: number, tagIds: number[]): Promise<void> {
    await trx.deleteFrom('cheese_tags').where('cheese_id', '=', cheeseId).execute();
    if (tagIds.length === 0) return;
    await trx
      .insertInto('cheese_tags')
      .values(tagIds.map((tag_id) => ({ cheese_id: cheeseId, tag_id })))
      .execute();
  }

  async tagsOf(executor: Kysely<DB>, cheeseIds: number[]): Promise<Map<number, { id: number; name: string }[]>> {
    const result = new Map<number, { id: number; name: string }[]>();
    if (cheeseIds.length === 0) return result;
    const rows = await executor
      .selectFrom('cheese_tags as ct')
      .innerJoin('tags as t', 't.id', 'ct.tag_id')
      .select(['ct.cheese_id', 't.id', 't.name'])
      .where('ct.cheese_id', 'in', cheeseIds)
      .orderBy('t.name')
      .execute();
    for (const row of rows) {
      const list = result.get(row.cheese_id) ?? [];
      list.push({ id: row.id, name: row.name });
      result.set(row.cheese_id, list);
    }
    return result;
  }
}
