import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';

let t: TestApp;
let admin: string;
let reader: string;
const ids: Record<string, number> = {};
const slugs: Record<string, string> = {};

/** name -> body; months are the seasonal window. */
const FIXTURES: Record<string, Record<string, unknown>> = {
  'Finder Alpha': { status: 'available', stockQuantityKg: 10, tags: [{ name: 'smoked' }, { name: 'farmhouse' }] },
  'Finder Bravo': { status: 'pending', stockQuantityKg: 5, tags: [{ name: 'ash' }] },
  'Finder Charlie': { status: 'sold', stockQuantityKg: 0, tags: [{ name: 'farmhouse' }] },
  'Spring Chèvre': { status: 'available', stockQuantityKg: 4, seasonal: true, availableMonths: [3, 4, 5], milk: 'goat' },
  'Winter Vacherin': { status: 'available', stockQuantityKg: 2, seasonal: true, availableMonths: [11, 12, 1] },
  'Evergreen Seasonal': { status: 'available', stockQuantityKg: 1, seasonal: true, availableMonths: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] },
};
const NON_SEASONAL = ['Finder Alpha', 'Finder Bravo', 'Finder Charlie'];

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.key(['admin']);
  reader = await t.key(['read:cheeses']);
  for (const [name, body] of Object.entries(FIXTURES)) {
    const res = await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name, ...body } });
    expect(res.status).toBe(201);
    ids[name] = res.body.id;
    slugs[name] = res.body.slug;
  }
});
afterAll(() => t.close());

const namesOf = (items: any[]) => items.map((c) => c.name).sort();

describe('GET /cheeses/findByStatus', () => {
  it('answers the cheeses in any of the comma-separated statuses', async () => {
    const available = await t.http.get('/v2/cheeses/findByStatus?status=available', { headers: bearer(reader) });
    expect(available.status).toBe(200);
    expect(namesOf(available.body)).toEqual(['Evergreen Seasonal', 'Finder Alpha', 'Spring Chèvre', 'Winter Vacherin']);
    expect(available.body.every((c: any) => c.status === 'available')).toBe(true);

    const two = await t.http.get('/v2/cheeses/findByStatus?status=pending,sold', { headers: bearer(reader) });
    expect(namesOf(two.body)).toEqual(['Finder Bravo', 'Finder Charlie']);
    const spaced = await t.http.get('/v2/cheeses/findByStatus?status=sold,%20pending', { headers: bearer(reader) });
    expect(namesOf(spaced.body)).toEqual(['Finder Bravo', 'Finder Charlie']);
    const all = await t.http.get('/v2/cheeses/findByStatus?status=available,pending,sold', { headers: bearer(reader) });
    expect(all.body).toHaveLength(6);
    expect(all.body.find((c: any) => c.name === 'Finder Bravo')).toMatchObject({ id: ids['Finder Bravo'], status: 'pending', stockQuantityKg: 5 });
  });

  it('an invalid or empty status is 400', async () => {
    for (const query of ['?status=ripe', '?status=available,ripe', '?status=', '?status=,', '']) {
      const res = await t.http.get(`/v2/cheeses/findByStatus${query}`, { headers: bearer(reader) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, type: 'invalid_request' });
      expect(typeof res.body.message).toBe('string');
    }
  });
});

describe('GET /cheeses/findByTags (deprecated)', () => {
  it('answers cheeses with any of the tags, with Deprecation and a successor Link', async () => {
    const res = await t.http.get('/v2/cheeses/findByTags?tags=ash,smoked', { headers: bearer(reader) });
    expect(res.status).toBe(200);
    expect(namesOf(res.body)).toEqual(['Finder Alpha', 'Finder Bravo']);
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    const link = res.headers.get('link');
    expect(link).toMatch(/rel="successor-version"/);
    const successor = /^<([^>]+)>/.exec(link!)![1]!;
    expect(new URL(successor, 'http://x').searchParams.get('tags')).toBe('ash,smoked');
    const followed = await t.http.get(successor, { headers: apiKey(reader) });
    expect(followed.status).toBe(200);
    expect(namesOf(followed.body.items)).toEqual(['Finder Alpha', 'Finder Bravo']);

    const farmhouse = await t.http.get('/v2/cheeses/findByTags?tags=farmhouse', { headers: bearer(reader) });
    expect(namesOf(farmhouse.body)).toEqual(['Finder Alpha', 'Finder Charlie']);
    const nothing = await t.http.get('/v2/cheeses/findByTags?tags=no-such-tag', { headers: bearer(reader) });
    expect(nothing.body).toEqual([]);
  });

  it('an invalid tag is 400', async () => {
    for (const tags of ['Bad%20Tag!', 'ash,UPPER', '']) {
      const res = await t.http.get(`/v2/cheeses/findByTags?tags=${tags}`, { headers: bearer(reader) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, type: 'invalid_request' });
    }
  });
});

describe('GET /cheeses/seasonal', () => {
  const seasonal = (query: string) => t.http.get(`/v2/cheeses/seasonal${query}`, { headers: apiKey(reader) });

  it('lists the seasonal cheeses whose window includes ?month=', async () => {
    const april = await seasonal('?month=4');
    expect(april.status).toBe(200);
    expect(namesOf(april.body.items)).toEqual(['Evergreen Seasonal', 'Spring Chèvre']);
    expect(april.body.total).toBe(2);
    expect(namesOf((await seasonal('?month=12')).body.items)).toEqual(['Evergreen Seasonal', 'Winter Vacherin']);
    expect(namesOf((await seasonal('?month=1')).body.items)).toEqual(['Evergreen Seasonal', 'Winter Vacherin']);
    expect(namesOf((await seasonal('?month=7')).body.items)).toEqual(['Evergreen Seasonal']);
  });

  it('never lists a non-seasonal cheese, in any month', async () => {
    for (let month = 1; month <= 12; month++) {
      const res = await seasonal(`?month=${month}`);
      expect(res.status).toBe(200);
      const names: string[] = res.body.items.map((c: any) => c.name);
      expect(names).toContain('Evergreen Seasonal');
      for (const name of NON_SEASONAL) expect(names).not.toContain(name);
      expect(res.body.items.every((c: any) => c.seasonal && c.availableMonths.includes(month))).toBe(true);
    }
  });

  it('defaults to the current month and rejects an invalid month with 400', async () => {
    const now = await seasonal('');
    const current = await seasonal(`?month=${new Date().getUTCMonth() + 1}`);
    expect(now.status).toBe(200);
    expect(namesOf(now.body.items)).toEqual(namesOf(current.body.items));
    for (const month of ['0', '13', 'may']) {
      const res = await seasonal(`?month=${month}`);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('invalid_request');
    }
  });
});

describe('GET /cheeses/{cheeseId}', () => {
  it('finds a cheese by integer id and by slug', async () => {
    const byId = await t.http.get(`/v2/cheeses/${ids['Spring Chèvre']}`, { headers: apiKey(reader) });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: ids['Spring Chèvre'], slug: 'spring-chevre', name: 'Spring Chèvre', milk: 'goat', availableMonths: [3, 4, 5] });
    const bySlug = await t.http.get('/v2/cheeses/spring-chevre', { headers: apiKey(reader) });
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toEqual(byId.body);
    const bearerKey = await t.http.get(`/v2/cheeses/${slugs['Finder Alpha']}`, { headers: bearer(reader) });
    expect(bearerKey.body.id).toBe(ids['Finder Alpha']);
  });

  it('an unknown id or slug is 404 with the Error shape', async () => {
    for (const id of ['987654', 'no-such-cheese']) {
      const res = await t.http.get(`/v2/cheeses/${id}`, { headers: apiKey(reader) });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 404, type: 'not_found', message: `Cheese ${id} not found.` });
    }
    const malformed = await t.http.get('/v2/cheeses/bad_slug!', { headers: apiKey(reader) });
    expect(malformed.status).toBe(400);
  });

  it('takes X-API-Key; a key without read:cheeses is 403; no key is 401', async () => {
    const other = await t.key(['read:orders']);
    const res = await t.http.get(`/v2/cheeses/${ids['Finder Alpha']}`, { headers: apiKey(other) });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 403, type: 'forbidden' });
    expect(res.body.message).toContain('read:cheeses');
    const anonymous = await t.http.get(`/v2/cheeses/${ids['Finder Alpha']}`);
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /store/inventory', () => {
  async function dbCounts(): Promise<Record<string, number>> {
    const rows = await t.database.db.selectFrom('cheeses').select(['status']).execute();
    const counts: Record<string, number> = { available: 0, pending: 0, sold: 0 };
    for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
    return counts;
  }

  it('counts the cheeses in each status, as stored', async () => {
    const res = await t.http.get('/v2/store/inventory', { headers: apiKey(reader) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ available: 4, pending: 1, sold: 1 });
    expect(res.body).toEqual(await dbCounts());
  });

  it('follows changes of status', async () => {
    const admin2 = await t.key(['admin']);
    const changed = await t.http.post(`/v2/cheeses/${ids['Finder Alpha']}?status=pending`, { headers: bearer(admin2) });
    expect(changed.status).toBe(200);
    const res = await t.http.get('/v2/store/inventory', { headers: apiKey(reader) });
    expect(res.body).toEqual({ available: 3, pending: 2, sold: 1 });
    expect(res.body).toEqual(await dbCounts());
    expect((await t.http.get('/v2/store/inventory', { headers: apiKey(await t.key(['read:profile'])) })).status).toBe(403);
  });
});

describe('CSV of an empty page', () => {
  it('still carries the full header row', async () => {
    const res = await t.http.get('/v2/cheeses?q=no-such-cheese-anywhere', { headers: { ...apiKey(reader), accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.text).toBe(`${['id', 'slug', 'name', 'category', 'photoUrls', 'tags', 'status', 'origin', 'region', 'producer', 'milk', 'pasteurized', 'texture', 'rind', 'agedWeeks', 'ageMonths', 'tastingNotes', 'stinkinessRating', 'servingTempCelsius', 'pairings', 'seasonal', 'availableMonths', 'agingProfile', 'organic', 'pricePerKg', 'inStock', 'stockQuantityKg', 'createdAt', 'updatedAt'].join(',')}\r\n`);
  });
});

describe('list parameters, comma-separated or repeated', () => {
  it('reads status and tags either way (OpenAPI explode clients and Form A clients alike)', async () => {
    const headers = bearer(admin);
    const comma = await t.http.get('/v2/cheeses/findByStatus?status=pending,sold', { headers });
    const repeated = await t.http.get('/v2/cheeses/findByStatus?status=pending&status=sold', { headers });
    expect(repeated.status).toBe(200);
    expect(repeated.body.map((c: any) => c.id)).toEqual(comma.body.map((c: any) => c.id));
    expect(comma.body.map((c: any) => c.name)).toEqual(expect.arrayContaining(['Finder Bravo', 'Finder Charlie']));

    const tags = await t.http.get('/v2/cheeses?tags=ash&tags=smoked&fields=name', { headers });
    expect(tags.body.items.map((c: any) => c.name).sort()).toEqual(['Finder Alpha', 'Finder Bravo']);
    const deprecated = await t.http.get('/v2/cheeses/findByTags?tags=ash&tags=smoked', { headers });
    expect(deprecated.headers.get('link')).toBe('</v2/cheeses?tags=ash%2Csmoked>; rel="successor-version"');
    expect((await t.http.get('/v2/cheeses/findByStatus?status=pending&status=bogus', { headers })).status).toBe(400);
  });
});
