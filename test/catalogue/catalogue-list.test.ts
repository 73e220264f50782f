import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey } from '../helpers/http.js';
import { foldForSearch } from '../../src/kernel/text.js';

/** The seed files themselves are the oracle for counts and order. */
interface SeedCheese {
  name: string; category: string; tags: string[]; origin: string; texture: string; milk: string;
  agedWeeks: number; organic: boolean; seasonal: boolean; stockQuantityKg: number; pricePerKg: number;
}
const SEED_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../seed/cheeses');
const seed: SeedCheese[] = fs
  .readdirSync(SEED_DIR)
  .filter((f) => f.endsWith('.json'))
  .flatMap((f) => JSON.parse(fs.readFileSync(path.join(SEED_DIR, f), 'utf8')) as SeedCheese[]);
const count = (predicate: (c: SeedCheese) => boolean) => seed.filter(predicate).length;
const byName = (a: string, b: string) => (foldForSearch(a) < foldForSearch(b) ? -1 : foldForSearch(a) > foldForSearch(b) ? 1 : 0);

let t: TestApp;
let headers: Record<string, string>;
beforeAll(async () => {
  t = await createTestApp({ seed: true });
  headers = apiKey(await t.key(['read:cheeses']));
});
afterAll(() => t.close());

const list = (query = '', extra: Record<string, string> = {}) => t.http.get(`/v2/cheeses${query}`, { headers: { ...headers, ...extra } });

/** Follows nextCursor to the end, checking the hasMore/nextCursor contract on every page. */
async function walk(query: string): Promise<{ items: any[]; pages: any[] }> {
  const items: any[] = [];
  const pages: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await list(`?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor === null).toBe(!res.body.hasMore);
    pages.push(res.body);
    items.push(...res.body.items);
    cursor = res.body.nextCursor;
    expect(pages.length).toBeLessThan(300);
  } while (cursor);
  return { items, pages };
}

function flip(cursor: string, index: number): string {
  return cursor.slice(0, index) + (cursor[index] === 'A' ? 'B' : 'A') + cursor.slice(index + 1);
}

describe('GET /cheeses: pages', () => {
  it('answers the first 20 cheeses by name with the total of the seeded catalogue', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(245);
    expect(res.body.items).toHaveLength(20);
    expect(res.body.hasMore).toBe(true);
    expect(typeof res.body.nextCursor).toBe('string');
    expect(res.body).not.toHaveProperty('next_cursor');
    const expected = seed.map((c) => c.name).sort(byName).slice(0, 20);
    expect(res.body.items.map((c: any) => c.name)).toEqual(expected);
  });

  it('walks every page with nextCursor, visiting each cheese exactly once in name order', async () => {
    const { items, pages } = await walk('limit=20');
    expect(pages).toHaveLength(13);
    expect(items).toHaveLength(245);
    expect(new Set(items.map((c) => c.id)).size).toBe(245);
    expect(items.map((c) => c.name)).toEqual(seed.map((c) => c.name).sort(byName));
    const last = pages.at(-1);
    expect(last.items).toHaveLength(5);
    expect(last).toMatchObject({ hasMore: false, nextCursor: null, total: 245 });
  });

  it('a page that ends exactly at the last row has hasMore false and nextCursor null', async () => {
    const { items, pages } = await walk('limit=49');
    expect(pages.map((p) => p.items.length)).toEqual([49, 49, 49, 49, 49]);
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, true, true, false]);
    expect(pages.at(-1).nextCursor).toBeNull();
    expect(new Set(items.map((c) => c.id)).size).toBe(245);

    const outOfStock = count((c) => c.stockQuantityKg === 0);
    const single = await list(`?inStock=false&limit=${outOfStock}`);
    expect(single.body).toMatchObject({ total: outOfStock, hasMore: false, nextCursor: null });
    expect(single.body.items).toHaveLength(outOfStock);
    expect(single.headers.get('link')).toBeNull();

    const french = count((c) => c.origin === 'France');
    const halves = await walk(`country=France&limit=${french / 2}`);
    expect(halves.pages.map((p) => [p.items.length, p.hasMore])).toEqual([[french / 2, true], [french / 2, false]]);
  });

  it('sort=-name equals sort=name&order=desc, reverses the name order, and shares cursors', async () => {
    const minus = await list('?sort=-name');
    const desc = await list('?sort=name&order=desc');
    expect(minus.status).toBe(200);
    expect(minus.body.items.map((c: any) => c.id)).toEqual(desc.body.items.map((c: any) => c.id));
    expect(minus.body.items.map((c: any) => c.name)).toEqual(seed.map((c) => c.name).sort(byName).reverse().slice(0, 20));
    const next = await list(`?sort=name&order=desc&cursor=${encodeURIComponent(minus.body.nextCursor)}`);
    expect(next.status).toBe(200);
    expect(next.body.items[0].name).toBe(seed.map((c) => c.name).sort(byName).reverse()[20]);

    const contradiction = await list('?sort=-name&order=asc');
    expect(contradiction.status).toBe(400);
    expect(contradiction.body).toMatchObject({ code: 400, type: 'invalid_request' });
    expect((await list('?sort=colour')).status).toBe(400);
    expect((await list('?order=sideways')).status).toBe(400);
  });

  it('sorts by createdAt with the id as tie-breaker, across pages', async () => {
    const { items } = await walk('sort=createdAt&limit=50');
    expect(new Set(items.map((c) => c.id)).size).toBe(245);
    for (let i = 1; i < items.length; i++) {
      const [a, b] = [items[i - 1], items[i]];
      expect(a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)).toBe(true);
    }
  });

  it('sorts by pricePerKg both ways (snake_case accepted)', async () => {
    const { items } = await walk('sort=pricePerKg&limit=30');
    expect(new Set(items.map((c) => c.id)).size).toBe(245);
    const prices = items.map((c) => c.pricePerKg as number);
    expect(prices).toEqual([...seed.map((c) => c.pricePerKg)].sort((a, b) => a - b));
    const snake = await list('?sort=price_per_kg&limit=30');
    expect(snake.body.items.map((c: any) => c.id)).toEqual(items.slice(0, 30).map((c) => c.id));
    const dearest = await list('?sort=-pricePerKg&limit=1');
    expect(dearest.body.items[0].pricePerKg).toBe(Math.max(...seed.map((c) => c.pricePerKg)));
  });
});

describe('GET /cheeses: cursors and limits', () => {
  it('a tampered cursor is 400 invalid_request', async () => {
    const first = await list('?limit=5');
    const cursor: string = first.body.nextCursor;
    const dot = cursor.indexOf('.');
    for (const bad of [flip(cursor, 2), flip(cursor, dot + 3), cursor.slice(0, dot), `${cursor}.x`, 'not-a-cursor']) {
      const res = await list(`?limit=5&cursor=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, type: 'invalid_request' });
    }
  });

  it('a cursor reused with other filters or another sort is 400; another limit is fine', async () => {
    const first = await list('?limit=20');
    const cursor = encodeURIComponent(first.body.nextCursor);
    for (const other of ['country=France', 'texture=blue', 'sort=createdAt', 'sort=-name', 'q=brie']) {
      const res = await list(`?limit=20&${other}&cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('invalid_request');
    }
    const second = await list(`?limit=20&cursor=${cursor}`);
    const smaller = await list(`?limit=5&cursor=${cursor}`);
    expect(smaller.status).toBe(200);
    expect(smaller.body.items.map((c: any) => c.id)).toEqual(second.body.items.slice(0, 5).map((c: any) => c.id));
  });

  it('limit must be an integer from 1 to 100', async () => {
    for (const limit of ['0', '101', 'abc', '-1', '2.5']) {
      const res = await list(`?limit=${limit}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, type: 'invalid_request' });
    }
    const max = await list('?limit=100');
    expect(max.body.items).toHaveLength(100);
  });
});

describe('GET /cheeses: filters', () => {
  const cases: [string, (c: SeedCheese) => boolean, (item: any) => boolean][] = [
    ['country=france', (c) => c.origin === 'France', (i) => i.origin === 'France'],
    ['country=UNITED%20KINGDOM', (c) => c.origin === 'United Kingdom', (i) => i.origin === 'United Kingdom'],
    ['texture=blue', (c) => c.texture === 'blue', (i) => i.texture === 'blue'],
    ['milk=goat', (c) => c.milk === 'goat', (i) => i.milk === 'goat'],
    ['aged_weeks_min=52', (c) => c.agedWeeks >= 52, (i) => i.agedWeeks >= 52],
    ['agedWeeksMin=52', (c) => c.agedWeeks >= 52, (i) => i.agedWeeks >= 52],
    ['organic=true', (c) => c.organic, (i) => i.organic === true],
    ['organic=false', (c) => !c.organic, (i) => i.organic === false],
    ['seasonal=true', (c) => c.seasonal, (i) => i.seasonal === true && i.availableMonths.length > 0],
    ['inStock=false', (c) => c.stockQuantityKg === 0, (i) => i.inStock === false && i.stockQuantityKg === 0],
    ['in_stock=true', (c) => c.stockQuantityKg > 0, (i) => i.inStock === true],
    ['category=washed%20RIND', (c) => c.category === 'Washed rind', (i) => i.category.name === 'Washed rind'],
    ['tags=smoked,ash', (c) => c.tags.includes('smoked') || c.tags.includes('ash'), (i) => i.tags.some((tag: any) => ['smoked', 'ash'].includes(tag.name))],
    ['country=France&texture=soft&milk=cow', (c) => c.origin === 'France' && c.texture === 'soft' && c.milk === 'cow', (i) => i.origin === 'France' && i.texture === 'soft' && i.milk === 'cow'],
  ];
  it.each(cases)('%s: total matches the catalogue and every item matches', async (query, inSeed, matches) => {
    const expected = count(inSeed);
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(245);
    const res = await list(`?${query}&limit=100`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(expected);
    expect(res.body.items).toHaveLength(Math.min(expected, 100));
    expect(res.body.items.every(matches)).toBe(true);
  });

  it('combined filters narrow the total', async () => {
    const france = (await list('?country=France')).body.total;
    const frenchSoft = (await list('?country=France&texture=soft')).body.total;
    const frenchSoftOrganic = (await list('?country=France&texture=soft&organic=true')).body.total;
    expect(france).toBe(count((c) => c.origin === 'France'));
    expect(frenchSoft).toBe(count((c) => c.origin === 'France' && c.texture === 'soft'));
    expect(frenchSoft).toBeLessThan(france);
    expect(frenchSoftOrganic).toBe(count((c) => c.origin === 'France' && c.texture === 'soft' && c.organic));
    expect(frenchSoftOrganic).toBeLessThan(frenchSoft);
  });

  it('q treats hyphens, spaces, case and accents alike', async () => {
    const queries = ['saint-nectaire', 'saint%20nectaire', encodeURIComponent('Saint Néctaire'), 'SAINT-NECTAIRE'];
    const results = await Promise.all(queries.map((q) => list(`?q=${q}`)));
    const names = results[0]!.body.items.map((c: any) => c.name);
    expect(names).toContain('Saint-Nectaire fermier');
    expect(results[0]!.body.total).toBeGreaterThan(0);
    for (const res of results) {
      expect(res.status).toBe(200);
      expect(res.body.items.map((c: any) => c.name)).toEqual(names);
      expect(res.body.total).toBe(results[0]!.body.total);
    }
    const none = await list('?q=zzqx-no-such-cheese');
    expect(none.body).toMatchObject({ total: 0, items: [], hasMore: false, nextCursor: null });
  });

  it('invalid filter values are 400', async () => {
    for (const query of ['texture=crumbly', 'milk=camel', 'organic=maybe', 'aged_weeks_min=-1', 'tags=Bad%20Tag!', 'status=ripe']) {
      const res = await list(`?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('invalid_request');
    }
  });
});

describe('GET /cheeses: representations', () => {
  it('fields= returns only id and the chosen fields, in either spelling', async () => {
    const res = await list('?fields=name,price_per_kg');
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(20);
    for (const item of res.body.items) expect(Object.keys(item).sort()).toEqual(['id', 'name', 'pricePerKg']);
    expect(res.body).toMatchObject({ total: 245, hasMore: true });
    const full = await list();
    expect(res.body.items).toEqual(full.body.items.map((c: any) => ({ id: c.id, name: c.name, pricePerKg: c.pricePerKg })));

    const unknown = await list('?fields=name,colour');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 400, type: 'invalid_request' });
    expect(unknown.body.message).toContain('colour');
  });

  it('Accept: text/csv returns CSV with a header row and one row per cheese', async () => {
    const json = await list();
    const res = await list('', { accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = res.text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines).toHaveLength(22);
    expect(lines[0]).toBe(Object.keys(json.body.items[0]).join(','));
    expect(lines.slice(1, 21).map((l) => Number(l.split(',')[0]))).toEqual(json.body.items.map((c: any) => c.id));

    const narrow = await list('?fields=name,pricePerKg', { accept: 'text/csv' });
    const rows = narrow.text.trimEnd().split('\r\n');
    expect(rows[0]).toBe('id,name,pricePerKg');
    expect(rows).toHaveLength(21);
    const first = json.body.items[0];
    expect(rows[1]).toBe(`${first.id},${first.name},${first.pricePerKg}`);
  });

  it('sends an ETag; If-None-Match with it is 304 with an empty body; CSV has its own ETag', async () => {
    const res = await list('?limit=7');
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect((await list('?limit=7')).headers.get('etag')).toBe(etag);

    const cached = await list('?limit=7', { 'if-none-match': etag! });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');

    const csv = await list('?limit=7', { accept: 'text/csv' });
    expect(csv.headers.get('etag')).toMatch(/^"/);
    expect(csv.headers.get('etag')).not.toBe(etag);
    const csvWithJsonTag = await list('?limit=7', { accept: 'text/csv', 'if-none-match': etag! });
    expect(csvWithJsonTag.status).toBe(200);
    expect((await list('?limit=8', { 'if-none-match': etag! })).status).toBe(200);
  });

  it('a Link rel="next" header points at the next page while hasMore', async () => {
    const first = await list('?limit=10&country=Italy');
    const link = first.headers.get('link');
    expect(link).toMatch(/^<[^>]+>; rel="next"$/);
    const target = /^<([^>]+)>/.exec(link!)![1]!;
    expect(target.startsWith('/v2/cheeses?')).toBe(true);
    const url = new URL(target, 'http://x');
    expect(url.searchParams.get('cursor')).toBe(first.body.nextCursor);
    expect(url.searchParams.get('country')).toBe('Italy');
    const followed = await t.http.get(target, { headers });
    const direct = await list(`?limit=10&country=Italy&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(followed.status).toBe(200);
    expect(followed.body.items.map((c: any) => c.id)).toEqual(direct.body.items.map((c: any) => c.id));
    expect(followed.body.items[0].id).not.toBe(first.body.items[0].id);
  });
});
