import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepared } from '../../src/db/prepared.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * Queries compiled once per shape (src/db/prepared.ts) must return exactly what the same
 * Kysely query returns when built afresh, with each call's own values, on both dialects.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const insertTag = prepared((db, row: { id?: number; name: string; created_at: string }) => db.insertInto('tags').values(row).returning(['id', 'name']));
const now = new Date().toISOString();
const tagsNamed = prepared((db, { names }: { names: string[] }) => db.selectFrom('tags').select('name').where('name', 'in', names).orderBy('name'));

describe('prepared queries', () => {
  it('bind each call its own values, arrays of any length included', async () => {
    const first = await insertTag(t.database.db, { name: 'prepared-a', created_at: now });
    const second = await insertTag(t.database.db, { id: undefined, name: 'prepared-b', created_at: now });
    expect(first).toEqual([{ id: expect.anything(), name: 'prepared-a' }]);
    expect(second).toEqual([{ id: expect.anything(), name: 'prepared-b' }]);
    expect(Number(second[0]!.id)).toBeGreaterThan(Number(first[0]!.id));
    // A value given is bound; an undefined one leaves its column out (here: the generated id).
    expect(await insertTag(t.database.db, { id: 900_001, name: 'prepared-c', created_at: now })).toEqual([{ id: 900_001, name: 'prepared-c' }]);

    expect(await tagsNamed(t.database.db, { names: ['prepared-b'] })).toEqual([{ name: 'prepared-b' }]);
    expect(await tagsNamed(t.database.db, { names: ['prepared-c', 'prepared-a'] })).toEqual([{ name: 'prepared-a' }, { name: 'prepared-c' }]);
    expect(await tagsNamed(t.database.db, { names: ['prepared-a'] })).toEqual([{ name: 'prepared-a' }]);
  });

  it('run inside a transaction, and roll back with it', async () => {
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await insertTag(trx, { name: 'prepared-rolled-back', created_at: now });
        expect(await tagsNamed(trx, { names: ['prepared-rolled-back'] })).toHaveLength(1);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await tagsNamed(t.database.db, { names: ['prepared-rolled-back'] })).toEqual([]);
  });

  it('refuse a builder that writes a value into the SQL instead of binding it', async () => {
    const inlined = prepared((db, { name }: { name: string }) => db.selectFrom('tags').select('id').where(sql<boolean>`name = ${sql.raw(`'${name}'`)}`));
    await expect(inlined(t.database.db, { name: 'x' })).rejects.toThrow(/inlined, not bound/);
    // Kysely refuses a placeholder as a literal by itself.
    const literal = prepared((db, { name }: { name: string }) => db.selectFrom('tags').select('id').where('name', '=', sql.lit(name)));
    await expect(literal(t.database.db, { name: 'x' })).rejects.toThrow(/immediate value/);
  });
});
