import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let auth: Record<string, string>;
let read: Record<string, string>;
beforeAll(async () => {
  ({ t, auth, read } = await createAdminTestApp());
});
afterAll(() => t.close());

// Batches with deletes need the confirmation header, as single deletes do.
const bulk = (json: unknown) => t.http.post('/v2/cheeses/bulk', { headers: { ...auth, 'x-confirm-delete': 'true' }, json });
const create = async (json: Record<string, unknown>) => {
  const res = await t.http.post('/v2/cheeses', { headers: auth, json });
  expect(res.status).toBe(201);
  return res.body as { id: number; slug: string; name: string };
};

/** Every row that bulk may touch, to compare before and after. */
async function snapshot() {
  const cheeses = await t.database.db.selectFrom('cheeses').select(['id', 'name', 'status', 'stock_grams', 'price_cents']).orderBy('id').execute();
  const outbox = await t.database.db.selectFrom('outbox').select('event_id').orderBy('id').execute();
  return { cheeses: cheeses.map((c) => ({ ...c, stock_grams: Number(c.stock_grams), price_cents: Number(c.price_cents) })), outbox };
}
const cheeseCount = async () => (await snapshot()).cheeses.length;
const nameOf = async (id: number) => (await t.database.db.selectFrom('cheeses').select('name').where('id', '=', id).executeTakeFirst())?.name;

describe('POST /cheeses/bulk', () => {
  it('applies mixed create, update and delete operations, one result each', async () => {
    const kept = await create({ name: 'Bulk Keeper', pricePerKg: 10 });
    const doomed = await create({ name: 'Bulk Doomed' });
    const res = await bulk({
      operations: [
        { op: 'create', cheese: { name: 'Bulk Newcomer', price_per_kg: 21.5, category: { name: 'Hard' } } },
        { op: 'update', id: kept.id, cheese: { pricePerKg: 11.25, stockQuantityKg: 4 } },
        { op: 'delete', id: doomed.slug },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ atomic: false, succeeded: 3, failed: 0 });
    expect(res.body.results.map((r: any) => [r.index, r.op, r.status])).toEqual([[0, 'create', 201], [1, 'update', 200], [2, 'delete', 204]]);
    const [created, updated, deleted] = res.body.results;
    expect(created.cheese).toMatchObject({ name: 'Bulk Newcomer', slug: 'bulk-newcomer', pricePerKg: 21.5, status: 'available', category: { name: 'Hard' } });
    expect(updated.cheese).toMatchObject({ id: kept.id, name: 'Bulk Keeper', pricePerKg: 11.25, stockQuantityKg: 4 });
    expect(deleted).not.toHaveProperty('cheese');
    expect(deleted).not.toHaveProperty('error');

    expect((await t.http.get(`/v2/cheeses/${created.cheese.id}`, { headers: read })).body.name).toBe('Bulk Newcomer');
    expect((await t.http.get(`/v2/cheeses/${kept.id}`, { headers: read })).body.pricePerKg).toBe(11.25);
    expect(await nameOf(doomed.id)).toBeUndefined();
    const arrivals = await t.database.db.selectFrom('outbox').select('type').where('aggregate_id', '=', String(created.cheese.id)).execute();
    expect(arrivals.map((e) => e.type)).toEqual(['cheese.new_arrival']);
  });

  it('a non-atomic batch applies every operation that succeeds', async () => {
    const a = await create({ name: 'Loose A' });
    const before = await cheeseCount();
    const res = await bulk({
      operations: [
        { op: 'update', id: a.id, cheese: { name: 'Loose A renamed' } },
        { op: 'update', id: 987654, cheese: { name: 'Ghost' } },
        { op: 'create', cheese: { name: 'Loose B' } },
        { op: 'create', cheese: { name: 'Loose B' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ atomic: false, succeeded: 2, failed: 2 });
    expect(res.body.results.map((r: any) => r.status)).toEqual([200, 404, 201, 409]);
    expect(res.body.results[1].error).toMatchObject({ code: 404, type: 'not_found' });
    expect(res.body.results[3].error).toMatchObject({ code: 409, type: 'conflict' });
    expect(await nameOf(a.id)).toBe('Loose A renamed');
    expect(await cheeseCount()).toBe(before + 1);
  });

  it('an atomic batch with a failing operation applies none and marks the others 424', async () => {
    const a = await create({ name: 'Atomic A', pricePerKg: 5, stockQuantityKg: 10 });
    const b = await create({ name: 'Atomic B' });
    const before = await snapshot();
    const res = await bulk({
      atomic: true,
      operations: [
        { op: 'create', cheese: { name: 'Atomic New' } },
        { op: 'update', id: a.id, cheese: { stockQuantityKg: 0, pricePerKg: 6 } },
        { op: 'delete', id: b.id },
        { op: 'update', id: 'no-such-cheese', cheese: { name: 'Nobody' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ atomic: true, succeeded: 0, failed: 4 });
    expect(res.body.results.map((r: any) => r.status)).toEqual([424, 424, 424, 404]);
    expect(res.body.results[3].error).toMatchObject({ code: 404, type: 'not_found' });
    expect(res.body.results[0].error).toMatchObject({ code: 424 });
    expect(res.body.results[0].error.message).toContain('operation 3');
    expect(res.body.results.some((r: any) => r.cheese)).toBe(false);
    expect(await snapshot()).toEqual(before);

    const conflict = await bulk({ atomic: true, operations: [{ op: 'delete', id: b.id }, { op: 'create', cheese: { name: 'atomic a' } }] });
    expect(conflict.body.results.map((r: any) => r.status)).toEqual([424, 409]);
    expect(await snapshot()).toEqual(before);
  });

  it('an atomic batch that succeeds applies everything', async () => {
    const before = await cheeseCount();
    const res = await bulk({ atomic: true, operations: [{ op: 'create', cheese: { name: 'Atomic OK 1' } }, { op: 'create', cheese: { name: 'Atomic OK 2' } }] });
    expect(res.body).toMatchObject({ atomic: true, succeeded: 2, failed: 0 });
    expect(res.body.results.map((r: any) => r.status)).toEqual([201, 201]);
    expect(await cheeseCount()).toBe(before + 2);
  });

  it('takes at most 100 operations: 101 is 422 and changes nothing; 100 is fine', async () => {
    const ops = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ op: 'create', cheese: { name: `${prefix} ${i}` } }));
    const before = await snapshot();
    const tooMany = await bulk({ operations: ops(101, 'Too Many') });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body).toMatchObject({ code: 422, type: 'validation_failed' });
    expect(tooMany.body.errors.map((e: any) => e.field)).toContain('operations');
    expect(await snapshot()).toEqual(before);

    const hundred = await bulk({ operations: ops(100, 'Hundred') });
    expect(hundred.status).toBe(200);
    expect(hundred.body).toMatchObject({ succeeded: 100, failed: 0 });
    expect(new Set(hundred.body.results.map((r: any) => r.cheese.id)).size).toBe(100);
    expect(await cheeseCount()).toBe(before.cheeses.length + 100);

    const empty = await bulk({ operations: [] });
    expect(empty.status).toBe(422);
  });

  it('an invalid operation payload is 422 with field paths under operations.N.cheese', async () => {
    const target = await create({ name: 'Validation Target' });
    const before = await snapshot();
    const res = await bulk({
      operations: [
        { op: 'create', cheese: { name: 'Valid But Refused Twin', stinkinessRating: 4 } },
        { op: 'create', cheese: { name: 42 } },
        { op: 'create', cheese: { pricePerKg: 3 } },
        { op: 'create', cheese: { name: 'Mystery', colour: 'orange' } },
        { op: 'update', id: target.id, cheese: { stinkinessRating: 5.5 } },
        { op: 'create', cheese: { name: 'Both', price_per_kg: 1, pricePerKg: 1 } },
        { op: 'update', id: target.id, cheese: { seasonal: true } },
        { op: 'update', cheese: { name: 'No id' } },
      ],
    });
    expect(res.status).toBe(200);
    const statuses = res.body.results.map((r: any) => r.status);
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    const fields = (i: number) => res.body.results[i].error.errors.map((e: any) => e.field);
    for (let i = 1; i < 8; i++) expect(res.body.results[i].error.type).toBe('validation_failed');
    expect(fields(1)).toContain('operations.1.cheese.name');
    expect(fields(2)).toContain('operations.2.cheese.name');
    expect(fields(3)).toContain('operations.3.cheese.colour');
    expect(fields(4)).toContain('operations.4.cheese.stinkinessRating');
    expect(fields(5)).toContain('operations.5.cheese.price_per_kg');
    expect(fields(6)).toContain('operations.6.cheese.availableMonths');
    expect(fields(7)).toContain('operations.7.id');
    const after = await snapshot();
    expect(after.cheeses).toHaveLength(before.cheeses.length + 1);
    expect(after.cheeses.find((c) => c.id === target.id)).toEqual(before.cheeses.find((c) => c.id === target.id));
  });

  it('a malformed batch body is 422 naming the field', async () => {
    for (const [body, field] of [
      [{ operations: [{ op: 'merge', id: 1 }] }, 'operations.0.op'],
      [{ operations: [{ op: 'create', cheese: { name: 'x' }, extra: 1 }] }, 'operations.0.extra'],
      [{}, 'operations'],
    ] as const) {
      const res = await bulk(body);
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: any) => e.field)).toContain(field);
    }
  });
});
