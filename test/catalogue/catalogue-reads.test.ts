import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';

/** Search in every script, content negotiation, CSV that spreadsheets cannot execute (hardening issue). */
let t: TestApp;
let auth: Record<string, string>;
let read: Record<string, string>;
beforeAll(async () => {
  ({ t, auth, read } = await createAdminTestApp());
  for (const json of [
    { name: 'Брынза', origin: 'Россия' },
    { name: 'Φέτα Δωδώνης', origin: 'Ελλάδα' },
    { name: 'Weißlacker', origin: 'Deutschland' },
    { name: 'ゴーダ', origin: '日本' },
    { name: 'İzmir Tulum', origin: 'Türkiye' },
    { name: 'Plain Cheddar', origin: 'England' },
    { name: 'Nøkkelost', origin: 'Norge' },
    { name: 'タレ', origin: '日本' },
  ]) {
    expect((await t.http.post('/v2/cheeses', { headers: auth, json })).status).toBe(201);
  }
});
afterAll(() => t.close());

const names = async (q: string) => {
  const res = await t.http.get(`/v2/cheeses?q=${encodeURIComponent(q)}`, { headers: read });
  expect(res.status, q).toBe(200);
  return (res.body.items as { name: string }[]).map((c) => c.name).sort();
};

describe('search in every script', () => {
  it('finds words of non-Latin scripts, folding case and diacritics the same way in index and query', async () => {
    expect(await names('брынза')).toEqual(['Брынза']);
    expect(await names('БРЫНЗА')).toEqual(['Брынза']);
    expect(await names('φετα')).toEqual(['Φέτα Δωδώνης']);
    expect(await names('ΦΈΤΑ')).toEqual(['Φέτα Δωδώνης']);
    expect(await names('δωδωνησ')).toEqual(['Φέτα Δωδώνης']); // final sigma folds to σ
    expect(await names('WEISSLACKER')).toEqual(['Weißlacker']);
    expect(await names('weißlacker')).toEqual(['Weißlacker']);
    expect(await names('ゴーダ')).toEqual(['ゴーダ']);
    expect(await names('コーダ')).toEqual([]); // a voicing mark is part of the kana: ゴ is not コ
    expect(await names('nokkelost')).toEqual(['Nøkkelost']);
    expect(await names('日本')).toEqual(['タレ', 'ゴーダ'].sort());
    expect(await names('izmir')).toEqual(['İzmir Tulum']);
    expect(await names('россия')).toEqual(['Брынза']);
    expect(await names('cheddar england')).toEqual(['Plain Cheddar']);
  });

  it('names of every script sort by their folded form, not all first as empty', async () => {
    const res = await t.http.get('/v2/cheeses?limit=100&fields=name', { headers: read });
    // Folded: "izmir tulum", "nokkelost", "plain cheddar", "weisslacker", then Greek, Cyrillic and kana by code point.
    expect((res.body.items as { name: string }[]).map((c) => c.name)).toEqual(['İzmir Tulum', 'Nøkkelost', 'Plain Cheddar', 'Weißlacker', 'Φέτα Δωδώνης', 'Брынза', 'ゴーダ', 'タレ']);
  });

  it('a query with no searchable word is 400, never the whole catalogue', async () => {
    for (const q of ['!!!', '   ', '🧀', '%', '_']) {
      const res = await t.http.get(`/v2/cheeses?q=${encodeURIComponent(q)}`, { headers: read });
      expect(res.status, q).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'q', message: 'has no searchable word' }]);
    }
    expect(await names('no such cheese anywhere')).toEqual([]);
  });
});

describe('content negotiation', () => {
  const list = (accept: string) => t.http.get('/v2/cheeses?limit=2', { headers: { ...read, accept } });

  it('honours q-values: text/csv;q=0 is never CSV; a preferred CSV is', async () => {
    expect((await list('text/csv;q=0, application/json')).headers.get('content-type')).toMatch(/^application\/json/);
    expect((await list('application/json;q=0.5, text/csv')).headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await list('text/*')).headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await list('*/*')).headers.get('content-type')).toMatch(/^application\/json/);
    expect((await list('')).headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('406 in the Error shape when nothing acceptable is offered', async () => {
    for (const accept of ['application/xml', 'text/csv;q=0, application/json;q=0', 'image/png']) {
      const res = await list(accept);
      expect(res.status, accept).toBe(406);
      expect(res.body).toMatchObject({ code: 406, type: 'not_acceptable' });
    }
    expect((await t.http.get('/v2/store/inventory', { headers: { ...read, accept: 'text/csv' } })).status).toBe(406);
    expect((await t.http.get('/v2/store/inventory', { headers: { ...read, accept: 'application/json;q=0.1' } })).status).toBe(200);
  });
});

describe('CSV injection', () => {
  it('every text cell starting with = + - @ is disarmed, whatever its column; numbers stay numbers', async () => {
    const res = await t.http.post('/v2/cheeses', {
      headers: auth,
      json: { name: '=HYPERLINK("http://x")', category: { name: '=cmd|calc' }, pairings: ['-2+3', '@SUM(A1)'], origin: '+33', region: '  =1+1', producer: '＝SUM(1)', pricePerKg: 12.5 },
    });
    expect(res.status).toBe(201);
    const csv = await t.http.get(`/v2/cheeses?q=hyperlink&fields=name,category,pairings,origin,region,producer,pricePerKg`, { headers: { ...read, accept: 'text/csv' } });
    const [header, row] = csv.text.trim().split('\r\n');
    expect(header).toBe('id,name,category,pairings,origin,region,producer,pricePerKg');
    expect(row).toBe(`${res.body.id},"'=HYPERLINK(""http://x"")",'=cmd|calc,"'-2+3;@SUM(A1)",'+33,'  =1+1,'＝SUM(1),12.5`);
  });
});
