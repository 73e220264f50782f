import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';

/** Inputs are taken exactly, or refused with the documented 4xx and no change (hardening issue). */
let t: TestApp;
let auth: Record<string, string>;
beforeAll(async () => {
  ({ t, auth } = await createAdminTestApp());
});
afterAll(() => t.close());

let seq = 0;
const create = (json: Record<string, unknown>) => t.http.post('/v2/cheeses', { headers: auth, json: { name: `Input Test ${++seq}`, ...json } });
const bulk = (json: unknown, headers: Record<string, string> = {}) => t.http.post('/v2/cheeses/bulk', { headers: { ...auth, ...headers }, json });
const counts = async () => ({
  cheeses: (await t.database.db.selectFrom('cheeses').select('id').execute()).length,
  categories: (await t.database.db.selectFrom('categories').select('id').execute()).length,
  outbox: (await t.database.db.selectFrom('outbox').select('id').execute()).length,
});
async function refused(write: () => Promise<{ status: number; body: any }>, status: number, field?: string) {
  const before = await counts();
  const res = await write();
  expect(res.status).toBe(status);
  if (field) expect(res.body.errors?.map((e: any) => e.field)).toContain(field);
  expect(await counts()).toEqual(before);
  return res;
}

describe('money and stock are exact', () => {
  it('more than two decimals of price, or three of stock, is 422 naming the field, everywhere money is accepted', async () => {
    // However close to a whole cent: 1e-9 would be a free cheese, 1.000000001 one dollar.
    const prices = [0.001, 1.005, 2.675, 12.345, 1e-9, 1.000000001, 1e-300, 0.1 + 0.2];
    for (const price of prices) await refused(() => create({ pricePerKg: price }), 422, 'pricePerKg');
    for (const stock of [1.0001, 1e-10, 2.0000000001]) await refused(() => create({ stockQuantityKg: stock }), 422, 'stockQuantityKg');
    const existing = (await create({ pricePerKg: 3 })).body;
    const unchanged = async () => expect((await t.http.get(`/v2/cheeses/${existing.id}`, { headers: auth })).body).toEqual(existing);
    for (const price of prices) {
      await refused(() => t.http.put('/v2/cheeses', { headers: auth, json: { ...existing, pricePerKg: price } }), 422, 'pricePerKg');
      for (const op of [{ op: 'create', cheese: { name: 'Bulk money', price_per_kg: price } }, { op: 'update', id: existing.id, cheese: { pricePerKg: price } }]) {
        const res = await refused(() => bulk({ operations: [op] }), 200);
        expect(res.body.results[0]).toMatchObject({ status: 422, error: { errors: [{ field: 'operations.0.cheese.pricePerKg' }] } });
      }
    }
    await unchanged();
  });

  it('stores two-decimal prices as exact cents, whatever binary floating point makes of them', async () => {
    for (const [price, cents] of [[0.29, 29], [1.1, 110], [2.67, 267], [99999.99, 9999999], [0.01, 1]] as const) {
      const res = await create({ pricePerKg: price, stockQuantityKg: 1.001 });
      expect(res.status).toBe(201);
      expect(res.body.pricePerKg).toBe(price);
      const row = await t.database.db.selectFrom('cheeses').select(['price_cents', 'stock_grams']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
      expect([Number(row.price_cents), Number(row.stock_grams)]).toEqual([cents, 1001]);
    }
  });
});

describe('references and links', () => {
  it('photoUrls take absolute http(s) URLs only', async () => {
    const refusedUrls = ['javascript:alert(1)', 'data:text/html,<script>x</script>', 'ftp://example.com/a.jpg', '/relative.jpg', 'https:example.com/a.jpg', 'http:/example.com/a.jpg', 'JavaScript://example.com/%0aalert(1)', 'https://user:secret@example.com/a.jpg'];
    for (const url of refusedUrls) {
      await refused(() => create({ photoUrls: ['https://example.com/ok.jpg', url] }), 422, 'photoUrls.1');
    }
    const existing = (await create({ photoUrls: ['https://example.com/a.jpg', 'HTTP://example.com/b.png'] })).body;
    expect(existing.photoUrls).toEqual(['https://example.com/a.jpg', 'HTTP://example.com/b.png']);
    for (const url of refusedUrls) {
      await refused(() => t.http.put('/v2/cheeses', { headers: auth, json: { ...existing, photoUrls: [url] } }), 422, 'photoUrls.0');
      const res = await refused(() => bulk({ operations: [{ op: 'update', id: existing.id, cheese: { photo_urls: ['https://example.com/ok.jpg', url] } }] }), 200);
      expect(res.body.results[0]).toMatchObject({ status: 422, error: { errors: [{ field: 'operations.0.cheese.photoUrls.1' }] } });
    }
    expect((await t.http.get(`/v2/cheeses/${existing.id}`, { headers: auth })).body).toEqual(existing);
  });

  it('a category or tag given as {id, name} that disagree is 422, never a new category', async () => {
    const made = (await create({ category: { name: 'Washed Rind' }, tags: [{ name: 'stinky' }] })).body;
    await refused(() => create({ category: { id: made.category.id, name: 'Blue' } }), 422, 'category');
    await refused(() => create({ tags: [{ id: made.tags[0].id, name: 'mild' }] }), 422, 'tags.0');
    const agreeing = await create({ category: { id: made.category.id, name: 'washed rind' }, tags: [{ id: made.tags[0].id, name: 'stinky' }] });
    expect(agreeing.status).toBe(201);
    expect(agreeing.body.category).toEqual(made.category);
    // Every write that takes references: PUT and a bulk update too.
    await refused(() => t.http.put('/v2/cheeses', { headers: auth, json: { ...made, category: { id: made.category.id, name: 'Blue' } } }), 422, 'category');
    const res = await refused(() => bulk({ operations: [{ op: 'update', id: made.id, cheese: { tags: [{ id: made.tags[0].id, name: 'mild' }] } }] }), 200);
    expect(res.body.results[0]).toMatchObject({ status: 422, error: { errors: [{ field: 'operations.0.cheese.tags.0' }] } });
  });
});

describe('text that looks empty', () => {
  // White space, controls, format characters, lone marks, default-ignorables (Hangul fillers, variation selectors) and the blank Braille pattern.
  const invisible = ['\u200b', ' \u2060 ', '\ufeff', '\u0301', '\u3000\u00a0', '\u3164', '\uffa0', '\u115f\u1160', '\u2800\u2800', '\ufe0f', '\u{e0041}'];

  it('a name of only invisible characters is 422, in every write and every human-facing text field', async () => {
    for (const name of invisible) await refused(() => t.http.post('/v2/cheeses', { headers: auth, json: { name } }), 422, 'name');
    const res = await bulk({ operations: [{ op: 'create', cheese: { name: '\u3164\u200b' } }] });
    expect(res.body.results[0]).toMatchObject({ status: 422, error: { errors: [{ field: 'operations.0.cheese.name', message: 'must contain a visible character' }] } });
    await refused(() => create({ category: { name: '\u200b' } }), 422, 'category.name');
    await refused(() => create({ pairings: ['Cider', '\u2800'] }), 422, 'pairings.1');
    await refused(() => create({ origin: { country: '\uffa0' } }), 422, 'origin.country');
    await refused(() => create({ agingProfile: { stages: [{ name: '\u3164', weeks: 2, temperatureC: 12, humidityPct: 90 }] } }), 422, 'agingProfile.stages.0.name');
    // The form update takes its name from the query: the same rule, and nothing changes.
    const existing = (await create({})).body;
    for (const name of invisible) {
      const form = await refused(() => t.http.post(`/v2/cheeses/${existing.id}?name=${encodeURIComponent(name)}`, { headers: auth }), 422, 'name');
      expect(form.body.errors).toEqual([{ field: 'name', message: 'must contain a visible character' }]);
    }
    await refused(() => t.http.put('/v2/cheeses', { headers: auth, json: { ...existing, name: '\u3164' } }), 422, 'name');
    expect((await t.http.get(`/v2/cheeses/${existing.id}`, { headers: auth })).body).toEqual(existing);
    // Other modules' text follows the same rule.
    const customer = { username: 'invisible.check', email: 'invisible@example.com', password: 'a long enough secret 4 tests' };
    await refused(() => t.http.post('/v2/customer', { json: { ...customer, firstName: '\u3164' } }), 422, 'firstName');
    expect((await t.http.post('/v2/customer', { json: customer })).status).toBe(201);
    const preferences = (favouriteCountries: string[]) => t.http.put(`/v2/customer/${customer.username}/preferences`, { headers: auth, json: { favouriteCountries } });
    expect((await preferences(['\u200b\u200b'])).body.errors).toEqual([{ field: 'favouriteCountries.0', message: 'must contain a visible character' }]);
    expect((await preferences(['France'])).status).toBe(200);
  });
});

describe('deletion', () => {
  it('a bulk batch with a delete needs X-Confirm-Delete: true, like a single delete', async () => {
    const doomed = (await create({})).body;
    await refused(() => bulk({ operations: [{ op: 'delete', id: doomed.id }] }), 400);
    expect((await bulk({ operations: [{ op: 'delete', id: doomed.id }] }, { 'x-confirm-delete': 'true' })).body.results[0].status).toBe(204);
  });

  it('concurrent deletes of one cheese, single or in batches: exactly one deletion, the others 404, no event', async () => {
    const doomed = (await create({})).body;
    const events = (await counts()).outbox;
    const confirmed = { ...auth, 'x-confirm-delete': 'true' };
    const answers = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        if (i < 7) return (await t.http.delete(`/v2/cheeses/${doomed.id}`, { headers: confirmed })).status;
        const res = await bulk({ atomic: i === 9, operations: [{ op: 'delete', id: doomed.slug }] }, { 'x-confirm-delete': 'true' });
        return res.body.results[0].status as number;
      }),
    );
    expect(answers.filter((s) => s === 204)).toHaveLength(1);
    expect(answers.filter((s) => s === 404)).toHaveLength(9);
    expect(await counts()).toMatchObject({ outbox: events });
    expect(await t.database.db.selectFrom('cheeses').select('id').where('id', '=', doomed.id).executeTakeFirst()).toBeUndefined();
  });
});

describe('image form fields', () => {
  const upload = async (parts: [string, string | Blob, string?][]) => {
    const cheese = (await create({})).body;
    const data = new FormData();
    for (const [name, value, filename] of parts) {
      if (filename) data.append(name, value as Blob, filename);
      else data.append(name, value as string);
    }
    return t.http.post(`/v2/cheeses/${cheese.id}/uploadImage`, { headers: auth, body: data });
  };
  const jpeg = async () => new Blob([new Uint8Array(await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ccaa44' } }).jpeg().toBuffer())], { type: 'image/jpeg' });

  it('a caption over 500 characters is 422, not truncated; an invisible one is 422', async () => {
    const file = await jpeg();
    for (const caption of ['x'.repeat(501), 'é'.repeat(1500), '\u200b', '\u3164']) {
      const res = await upload([['caption', caption], ['file', file, 'a.jpg']]);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field: 'caption', message: expect.any(String) }]);
    }
    expect((await upload([['caption', 'é'.repeat(500)], ['file', file, 'a.jpg']])).status).toBe(200);
  });

  it('a second file, a repeated field or an unknown part is 422 naming it (never 413, never the last one silently), and stores nothing', async () => {
    const file = await jpeg();
    const images = async () => (await t.database.db.selectFrom('cheese_images').select('id').execute()).length;
    const before = await images();
    const cases: [[string, string | Blob, string?][], string][] = [
      [[['file', file, 'a.jpg'], ['file', file, 'b.jpg']], 'file'],
      [[['file', file, 'a.jpg'], ['file', file, 'b.jpg'], ['file', file, 'c.jpg']], 'file'],
      [[['caption', 'First'], ['caption', 'Second'], ['file', file, 'a.jpg']], 'caption'],
      [[['file', file, 'a.jpg'], ['isPrimary', 'true'], ['isPrimary', 'false']], 'isPrimary'],
      [[...Array.from({ length: 8 }, (): [string, string] => ['caption', 'again']), ['file', file, 'a.jpg']], 'caption'],
      [[['file', file, 'a.jpg'], ['colour', 'blue']], 'colour'],
      [[['image', file, 'a.jpg']], 'image'],
    ];
    for (const [parts, field] of cases) {
      const res = await upload(parts);
      expect([res.status, res.body.type, res.body.errors?.[0]?.field]).toEqual([422, 'validation_failed', field]);
    }
    expect(await images()).toBe(before);
  });
});
