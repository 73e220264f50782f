import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { API_VERSION } from '../../src/version.js';

let t: TestApp;
let auth: Record<string, string>;
let read: Record<string, string>;
beforeAll(async () => {
  ({ t, auth, read } = await createAdminTestApp());
});
afterAll(() => t.close());

const create = (json: unknown, headers: Record<string, string> = {}) => t.http.post('/v2/cheeses', { headers: { ...auth, ...headers }, json });
const stockUpdate = (id: number, kg: number) => t.http.post('/v2/cheeses/bulk', { headers: auth, json: { operations: [{ op: 'update', id, cheese: { stockQuantityKg: kg } }] } });

async function tableCounts() {
  const cheeses = await t.database.db.selectFrom('cheeses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const outbox = await t.database.db.selectFrom('outbox').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { cheeses: Number(cheeses.n), outbox: Number(outbox.n) };
}

/** Runs a write that must be refused, and checks it changed no cheese and recorded no event. */
async function rejected(write: () => Promise<{ status: number; body: any }>, status: number) {
  const before = await tableCounts();
  const res = await write();
  expect(res.status).toBe(status);
  expect(res.body.code).toBe(status);
  expect(await tableCounts()).toEqual(before);
  return res;
}

async function eventsOf(id: number) {
  const rows = await t.database.db.selectFrom('outbox').selectAll().where('aggregate_id', '=', String(id)).orderBy('id').execute();
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data), metadata: JSON.parse(r.metadata) }));
}
const typesOf = async (id: number) => (await eventsOf(id)).map((e) => e.type);

describe('POST /cheeses', () => {
  it('creates with 201, a Location, defaults and a slug derived from the name', async () => {
    const res = await create({ name: 'Comté 24 mois', category: { name: 'Alpine' }, pricePerKg: 42.5 });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v2/cheeses/${res.body.id}`);
    expect(res.body).toMatchObject({ name: 'Comté 24 mois', slug: 'comte-24-mois', status: 'available', organic: false, seasonal: false, inStock: false, stockQuantityKg: 0, pricePerKg: 42.5, tags: [], availableMonths: [] });
    expect(res.body.category).toMatchObject({ name: 'Alpine' });
    const got = await t.http.get(res.headers.get('location')!, { headers: read });
    expect(got.body).toEqual(res.body);

    const twin = await create({ name: 'Comté 24 mois', category: { name: 'Hard' } });
    expect(twin.status).toBe(201);
    expect(twin.body.slug).not.toBe('comte-24-mois');
    expect(twin.body.slug).toMatch(/^comte-24-mois-[0-9a-z]+$/);
    expect((await t.http.get('/v2/cheeses/comte-24-mois', { headers: read })).body.id).toBe(res.body.id);
    expect((await t.http.get(`/v2/cheeses/${twin.body.slug}`, { headers: read })).body.id).toBe(twin.body.id);
  });

  it('accepts the snake_case aliases; sending both spellings of one field is 422', async () => {
    const res = await create({ name: 'Alias Tomme', price_per_kg: 19.9, aged_weeks: 12, stock_quantity_kg: 7.25 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ pricePerKg: 19.9, agedWeeks: 12, ageMonths: 2, stockQuantityKg: 7.25, inStock: true });
    expect(res.body).not.toHaveProperty('price_per_kg');
    const both = await rejected(() => create({ name: 'Both Spellings', price_per_kg: 10, pricePerKg: 10 }), 422);
    expect(both.body.type).toBe('validation_failed');
    expect(both.body.errors.map((e: any) => e.field)).toContain('price_per_kg');
  });

  it('stores ageMonths as weeks and reads the months back; disagreeing values are 422', async () => {
    const res = await create({ name: 'Six Month Gouda', ageMonths: 6 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ agedWeeks: 27, ageMonths: 6 });
    const row = await t.database.db.selectFrom('cheeses').select('aged_weeks').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.aged_weeks).toBe(27);
    expect((await create({ name: 'Agreeing Gouda', agedWeeks: 27, ageMonths: 6 })).status).toBe(201);
    const bad = await rejected(() => create({ name: 'Confused Gouda', agedWeeks: 10, ageMonths: 6 }), 422);
    expect(bad.body.errors.map((e: any) => e.field)).toContain('ageMonths');
  });

  it('refuses a non-integer stinkinessRating, unknown fields and a seasonal cheese without months', async () => {
    for (const rating of [5.5, '5', 0, 11]) {
      const res = await rejected(() => create({ name: 'Smelly', stinkinessRating: rating }), 422);
      expect(res.body.type).toBe('validation_failed');
      expect(res.body.errors[0].field).toBe('stinkinessRating');
    }
    const unknown = await rejected(() => create({ name: 'Mystery', colour: 'orange' }), 422);
    expect(unknown.body.errors).toContainEqual({ field: 'colour', message: expect.any(String) });
    const seasonal = await rejected(() => create({ name: 'Spring Only', seasonal: true }), 422);
    expect(seasonal.body.errors.map((e: any) => e.field)).toContain('availableMonths');
    const noName = await rejected(() => create({ pricePerKg: 3 }), 422);
    expect(noName.body.errors).toContainEqual({ field: 'name', message: 'is required' });
    await rejected(() => t.http.post('/v2/cheeses', { headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":' }), 400);
  });

  it('stores Form B origin {country, region, producer} as origin, region and producer', async () => {
    const res = await create({ name: 'Beaufort Chalet', origin: { country: 'France', region: 'Savoie', producer: 'Coopérative de Beaufort' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ origin: 'France', region: 'Savoie', producer: 'Coopérative de Beaufort' });
    const row = await t.database.db.selectFrom('cheeses').select(['origin', 'region', 'producer']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ origin: 'France', region: 'Savoie', producer: 'Coopérative de Beaufort' });
  });

  it('a duplicate name in the same category is 409 (case-insensitive); another category is fine', async () => {
    expect((await create({ name: 'Tomme Grise', category: { name: 'Semi-soft' } })).status).toBe(201);
    const dup = await rejected(() => create({ name: 'TOMME grise', category: { name: 'Semi-soft' } }), 409);
    expect(dup.body.type).toBe('conflict');
    await rejected(() => create({ name: 'Tomme Grise', category: { name: 'semi-SOFT' } }), 409);
    expect((await create({ name: 'Tomme Grise', category: { name: 'Washed rind' } })).status).toBe(201);
  });

  it('case-insensitivity covers accented letters on both dialects (names, categories, country filter)', async () => {
    expect((await create({ name: 'Époisses Affiné', category: { name: 'Éclat' }, origin: 'Écosse' })).status).toBe(201);
    await rejected(() => create({ name: 'époisses affiné', category: { name: 'Éclat' } }), 409);
    const merged = await create({ name: 'Other Éclat', category: { name: 'éCLAT' } });
    expect(merged.body.category.name).toBe('Éclat');
    const byCountry = await t.http.get(`/v2/cheeses?country=${encodeURIComponent('ÉCOSSE')}`, { headers: read });
    expect(byCountry.body.items.map((c: any) => c.name)).toEqual(['Époisses Affiné']);
    const byCategory = await t.http.get(`/v2/cheeses?category=${encodeURIComponent('éclat')}`, { headers: read });
    expect(byCategory.body.total).toBe(2);
  });

  it('records exactly one cheese.new_arrival event, snake_case, public: without the request id (issue 28)', async () => {
    const res = await create({ name: 'Event Chèvre', pricePerKg: 30, stockQuantityKg: 6 }, { 'x-request-id': 'req-catalogue-write-1' });
    expect(res.status).toBe(201);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBe('req-catalogue-write-1');
    const events = await eventsOf(res.body.id);
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event!.type).toBe('cheese.new_arrival');
    expect(event!.data).toMatchObject({ cheese_id: String(res.body.id), slug: 'event-chevre', name: 'Event Chèvre', price_per_kg: 30, stock_quantity_kg: 6, in_stock: true });
    for (const key of Object.keys(event!.data)) expect(key).toMatch(/^[a-z0-9_]+$/);
    // Every read:cheeses caller and every cheese.* webhook sees it: not the staff member's request.
    expect(event!.metadata).toMatchObject({ api_version: API_VERSION, environment: 'development', request_id: null, idempotency_key: null });
  });
});

describe('PUT /cheeses', () => {
  it('replaces by id and by slug; omitted optional fields return to their defaults, stock excepted', async () => {
    const full = await create({ name: 'Replace Me', category: { name: 'Fresh' }, tags: [{ name: 'organic' }], organic: true, tastingNotes: 'Lactic.', milk: 'goat', stockQuantityKg: 9 });
    const id = full.body.id;
    const res = await t.http.put('/v2/cheeses', { headers: auth, json: { id, name: 'Replaced', status: 'pending', stockQuantityKg: 9 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, name: 'Replaced', slug: 'replace-me', status: 'pending', organic: false, tastingNotes: null, milk: null, category: null, tags: [], stockQuantityKg: 9 });
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: read })).body.name).toBe('Replaced');

    const bySlug = await t.http.put('/v2/cheeses', { headers: auth, json: { id: 'replace-me', name: 'Replaced Again', status: 'available', milk: 'sheep' } });
    expect(bySlug.status).toBe(200);
    // Stock is inventory, not description: omitting it keeps it (no spurious out_of_stock).
    expect(bySlug.body).toMatchObject({ id, name: 'Replaced Again', milk: 'sheep', status: 'available', stockQuantityKg: 9 });
    expect(await typesOf(id)).not.toContain('cheese.out_of_stock');
  });

  it('accepts a GET body sent back unchanged (read-only fields ignored)', async () => {
    const created = await create({
      name: 'Roundtrip Reblochon', category: { name: 'Washed rind' }, tags: [{ name: 'raw-milk' }], origin: 'France', region: 'Savoie', milk: 'cow',
      texture: 'soft', agedWeeks: 6, stinkinessRating: 6, servingTempCelsius: { min: 14, max: 18 }, pairings: ['Apremont'], seasonal: true,
      availableMonths: [5, 6, 7], agingProfile: { stages: [{ name: 'cave', weeks: 6, temperatureC: 12, humidityPct: 92 }] }, pricePerKg: 28.4, stockQuantityKg: 12.5,
    });
    const got = await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: read });
    const eventsBefore = await typesOf(created.body.id);
    const res = await t.http.put('/v2/cheeses', { headers: auth, json: { ...got.body, slug: 'something-else', inStock: false, createdAt: '2000-01-01T00:00:00Z' } });
    expect(res.status).toBe(200);
    const { updatedAt: _u, ...rest } = res.body;
    const { updatedAt: _g, ...expected } = got.body;
    expect(rest).toEqual(expected);
    expect(await typesOf(created.body.id)).toEqual(eventsBefore);
  });

  it('an unknown id is 404; a missing status is 422', async () => {
    const missing = await rejected(() => t.http.put('/v2/cheeses', { headers: auth, json: { id: 987654, name: 'Ghost', status: 'available' } }), 404);
    expect(missing.body.type).toBe('not_found');
    await rejected(() => t.http.put('/v2/cheeses', { headers: auth, json: { id: 'no-such-cheese', name: 'Ghost', status: 'available' } }), 404);
    const existing = await create({ name: 'Statusless' });
    const noStatus = await rejected(() => t.http.put('/v2/cheeses', { headers: auth, json: { id: existing.body.id, name: 'Statusless' } }), 422);
    expect(noStatus.body.errors).toContainEqual({ field: 'status', message: 'is required' });
  });
});

describe('POST /cheeses/{cheeseId} (form update)', () => {
  it('changes only the given name and/or status', async () => {
    const created = await create({ name: 'Form Target', pricePerKg: 12, stockQuantityKg: 8, milk: 'sheep' });
    const id = created.body.id;
    const renamed = await t.http.post(`/v2/cheeses/${id}?name=Form%20Renamed`, { headers: auth });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Form Renamed', status: 'available', pricePerKg: 12, stockQuantityKg: 8, milk: 'sheep' });
    const status = await t.http.post(`/v2/cheeses/${created.body.slug}?status=pending`, { headers: auth });
    expect(status.body).toMatchObject({ name: 'Form Renamed', status: 'pending', pricePerKg: 12 });
    const invalid = await rejected(() => t.http.post(`/v2/cheeses/${id}?status=ripe`, { headers: auth }), 400);
    expect(invalid.body.type).toBe('invalid_request');
    await rejected(() => t.http.post('/v2/cheeses/987654?status=sold', { headers: auth }), 404);
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: read })).body.status).toBe('pending');
  });
});

describe('DELETE /cheeses/{cheeseId}', () => {
  it('requires X-Confirm-Delete: true, then deletes the row', async () => {
    const created = await create({ name: 'Doomed', tags: [{ name: 'fresh' }] });
    const id = created.body.id;
    const without = await rejected(() => t.http.delete(`/v2/cheeses/${id}`, { headers: auth }), 400);
    expect(without.body.type).toBe('invalid_request');
    await rejected(() => t.http.delete(`/v2/cheeses/${id}`, { headers: { ...auth, 'x-confirm-delete': 'false' } }), 400);
    const res = await t.http.delete(`/v2/cheeses/${id}`, { headers: { ...auth, 'x-confirm-delete': 'true' } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await t.database.db.selectFrom('cheeses').select('id').where('id', '=', id).executeTakeFirst()).toBeUndefined();
    expect(await t.database.db.selectFrom('cheese_tags').select('tag_id').where('cheese_id', '=', id).execute()).toEqual([]);
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: read })).status).toBe(404);
    await rejected(() => t.http.delete(`/v2/cheeses/${id}`, { headers: { ...auth, 'x-confirm-delete': 'true' } }), 404);
  });
});

describe('stock rules', () => {
  it('dropping below the threshold fires cheese.low_stock once per crossing', async () => {
    const { body } = await create({ name: 'Low Stock Cantal', stockQuantityKg: 10 });
    const three = await stockUpdate(body.id, 3);
    expect(three.body.results[0]).toMatchObject({ status: 200, cheese: { stockQuantityKg: 3, inStock: true, status: 'available' } });
    expect(await typesOf(body.id)).toEqual(['cheese.new_arrival', 'cheese.low_stock']);
    const [, low] = await eventsOf(body.id);
    expect(low!.data).toMatchObject({ cheese_id: String(body.id), stock_quantity_kg: 3, low_stock_threshold_kg: 5 });
    await stockUpdate(body.id, 2);
    expect(await typesOf(body.id)).toEqual(['cheese.new_arrival', 'cheese.low_stock']);
    await stockUpdate(body.id, 9);
    await stockUpdate(body.id, 4);
    expect(await typesOf(body.id)).toEqual(['cheese.new_arrival', 'cheese.low_stock', 'cheese.low_stock']);
  });

  it('reaching 0 sells out; restocking from 0 makes it available again', async () => {
    const { body } = await create({ name: 'Sell Out Salers', stockQuantityKg: 3 });
    const empty = await stockUpdate(body.id, 0);
    expect(empty.body.results[0].cheese).toMatchObject({ status: 'sold', inStock: false, stockQuantityKg: 0 });
    expect(await typesOf(body.id)).toEqual(['cheese.new_arrival', 'cheese.out_of_stock']);
    const row = await t.database.db.selectFrom('cheeses').select(['status', 'stock_grams']).where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('sold');
    expect(Number(row.stock_grams)).toBe(0);

    const restocked = await stockUpdate(body.id, 8);
    expect(restocked.body.results[0].cheese).toMatchObject({ status: 'available', inStock: true, stockQuantityKg: 8 });
    expect(await typesOf(body.id)).toEqual(['cheese.new_arrival', 'cheese.out_of_stock', 'cheese.back_in_stock']);

    const viaPut = await t.http.put('/v2/cheeses', { headers: auth, json: { id: body.id, name: 'Sell Out Salers', status: 'available', stockQuantityKg: 0 } });
    expect(viaPut.body).toMatchObject({ status: 'sold', inStock: false });
    expect((await typesOf(body.id)).at(-1)).toBe('cheese.out_of_stock');
  });
});
