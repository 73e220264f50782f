import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_CONTEXT } from '../../src/kernel/change-context.js';
import { createTestModules, type TestModules } from '../helpers/modules.js';

/**
 * The catalogue's services over a real database, without HTTP (issue 29 §2, the service tier):
 * the seeder loads the catalogue once, and stock is taken all or nothing, as orders rely on.
 */
let m: TestModules;

beforeAll(async () => {
  m = await createTestModules();
}, 60_000);
afterAll(() => m?.close());

const stockOf = async (id: number) => (await m.database.db.selectFrom('cheeses').select('stock_grams').where('id', '=', id).executeTakeFirstOrThrow()).stock_grams;

describe('the catalogue services', () => {
  it('seeds an empty catalogue once, and finds its cheeses by id or slug', async () => {
    const { seeder, cheeses } = m.modules.catalogue.provides;
    const seeded = await seeder.seedIfEmpty();
    expect(seeded).toBeGreaterThan(10);
    expect(await seeder.seedIfEmpty()).toBe(0);
    const [id] = await cheeses.orderable(m.database.db, 1000, 1);
    const found = await cheeses.find(m.database.db, id!);
    expect(found?.id).toBe(id);
    const slug = (await m.database.db.selectFrom('cheeses').select('slug').where('id', '=', id!).executeTakeFirstOrThrow()).slug;
    expect(await cheeses.find(m.database.db, slug)).toEqual(found);
    expect(await cheeses.find(m.database.db, 'no-such-cheese')).toBeUndefined();
  });

  it('takes stock for every line or for none, and gives it back', async () => {
    const { stock, cheeses } = m.modules.catalogue.provides;
    const [first, second] = await cheeses.orderable(m.database.db, 2000, 2);
    const [before1, before2] = [await stockOf(first!), await stockOf(second!)];
    const refused = await m.database.db.transaction().execute((trx) => stock.reserve(trx, [{ cheeseId: first!, grams: 1000 }, { cheeseId: second!, grams: before2 + 1 }], SYSTEM_CONTEXT));
    expect(refused.problems).toMatchObject([{ kind: 'short', cheeseId: second, requestedGrams: before2 + 1, availableGrams: before2 }]);
    expect([await stockOf(first!), await stockOf(second!)]).toEqual([before1, before2]);

    const taken = await m.database.db.transaction().execute((trx) => stock.reserve(trx, [{ cheeseId: first!, grams: 1000 }, { cheeseId: second!, grams: 500 }], SYSTEM_CONTEXT));
    expect(taken.problems).toEqual([]);
    expect([await stockOf(first!), await stockOf(second!)]).toEqual([before1 - 1000, before2 - 500]);
    await m.database.db.transaction().execute((trx) => stock.release(trx, [{ cheeseId: first!, grams: 1000 }, { cheeseId: second!, grams: 500 }], SYSTEM_CONTEXT));
    expect([await stockOf(first!), await stockOf(second!)]).toEqual([before1, before2]);
  });

  it('names an unknown cheese as such', async () => {
    const result = await m.database.db.transaction().execute((trx) => m.modules.catalogue.provides.stock.reserve(trx, [{ cheeseId: 987654, grams: 1 }], SYSTEM_CONTEXT));
    expect(result.problems).toEqual([{ kind: 'unknown', cheeseId: 987654 }]);
  });
});
