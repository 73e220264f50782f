import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';

/** Lost updates can be prevented: ETags on every read and write of a cheese, If-Match on writes (RFC 9110). */
let t: TestApp;
let auth: Record<string, string>;
let read: Record<string, string>;
beforeAll(async () => {
  ({ t, auth, read } = await createAdminTestApp());
});
afterAll(() => t.close());

let seq = 0;
const create = () => t.http.post('/v2/cheeses', { headers: auth, json: { name: `Precondition ${++seq}`, stockQuantityKg: 4 } });
const rename = (id: number, name: string, ifMatch?: string, headers: Record<string, string> = {}) =>
  t.http.post(`/v2/cheeses/${id}?name=${encodeURIComponent(name)}`, { headers: { ...auth, ...(ifMatch ? { 'if-match': ifMatch } : {}), ...headers } });
const outboxCount = async () => (await t.database.db.selectFrom('outbox').select('id').execute()).length;

describe('ETags on writes', () => {
  it('every write answer carries the ETag a following GET returns', async () => {
    const created = await create();
    expect(created.status).toBe(201);
    const get = await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: read });
    expect(created.headers.get('etag')).toBe(get.headers.get('etag'));
    const renamed = await rename(created.body.id, 'Precondition renamed');
    expect(renamed.headers.get('etag')).toBe((await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: read })).headers.get('etag'));
    const put = await t.http.put('/v2/cheeses', { headers: auth, json: { ...renamed.body, tastingNotes: 'Nutty.' } });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBe((await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: read })).headers.get('etag'));
  });
});

describe('If-Match', () => {
  it('a stale ETag is 412 and changes nothing; the current one applies', async () => {
    const created = await create();
    const stale = created.headers.get('etag')!;
    const first = await rename(created.body.id, 'First writer', stale);
    expect(first.status).toBe(200);
    const events = await outboxCount();
    const second = await rename(created.body.id, 'Second writer', stale);
    expect(second.status).toBe(412);
    expect(second.body).toMatchObject({ code: 412, type: 'precondition_failed' });
    expect((await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: read })).body.name).toBe('First writer');
    expect(await outboxCount()).toBe(events);
    expect((await rename(created.body.id, 'Second writer', first.headers.get('etag')!)).status).toBe(200);
  });

  it('applies to PUT and DELETE; a weak tag never matches; * matches any current cheese', async () => {
    const created = await create();
    const etag = created.headers.get('etag')!;
    const put = (ifMatch: string) => t.http.put('/v2/cheeses', { headers: { ...auth, 'if-match': ifMatch }, json: { ...created.body, rind: 'washed' } });
    expect((await put(`W/${etag}`)).status).toBe(412);
    expect((await put('"not-it", "nor-this"')).status).toBe(412);
    const applied = await put(`"x", ${etag}`);
    expect(applied.status).toBe(200);
    const del = (ifMatch: string) => t.http.delete(`/v2/cheeses/${created.body.id}`, { headers: { ...auth, 'x-confirm-delete': 'true', 'if-match': ifMatch } });
    expect((await del(etag)).status).toBe(412);
    expect((await del('*')).status).toBe(204);
    // A cheese that does not exist is a 404 whatever the preconditions (RFC 9110 §13.2.1).
    expect((await del('*')).status).toBe(404);
    expect((await put('*')).status).toBe(404);
    expect((await rename(created.body.id, 'Gone', applied.headers.get('etag')!)).status).toBe(404);
  });

  it('two writers with the same ETag at once: one 200, one 412', async () => {
    const created = await create();
    const etag = created.headers.get('etag')!;
    const answers = await Promise.all([rename(created.body.id, 'Racer A', etag), rename(created.body.id, 'Racer B', etag)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
    const current = (await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: read })).body;
    const put = (rind: string) => t.http.put('/v2/cheeses', { headers: { ...auth, 'if-match': `"x", ${answers.find((a) => a.status === 200)!.headers.get('etag')}` }, json: { ...current, rind } });
    const puts = await Promise.all([put('washed'), put('bloomy')]);
    expect(puts.map((a) => a.status).sort()).toEqual([200, 412]);
    expect((await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: read })).body.rind).toBe(puts.find((a) => a.status === 200)!.body.rind);
  });
});

describe('If-None-Match and If-Unmodified-Since on writes', () => {
  it('are honoured too: a write they forbid is 412 and changes nothing', async () => {
    const created = await create();
    const { id } = created.body;
    const etag = created.headers.get('etag')!;
    const withHeaders = (headers: Record<string, string>) => rename(id, `Renamed ${JSON.stringify(headers)}`.slice(0, 100), undefined, headers);
    const events = await outboxCount();
    // If-None-Match: * means "only if it does not exist"; a current tag (weak comparison) also fails a write.
    for (const headers of [{ 'if-none-match': '*' }, { 'if-none-match': `"x", W/${etag}` }]) expect((await withHeaders(headers)).status).toBe(412);
    const put = await t.http.put('/v2/cheeses', { headers: { ...auth, 'if-none-match': '*' }, json: { ...created.body, rind: 'natural' } });
    const del = await t.http.delete(`/v2/cheeses/${id}`, { headers: { ...auth, 'x-confirm-delete': 'true', 'if-none-match': etag } });
    expect([put.status, del.status]).toEqual([412, 412]);
    const updatedAt = Date.parse(created.body.updatedAt);
    const httpDate = (ms: number) => new Date(ms).toUTCString();
    expect((await withHeaders({ 'if-unmodified-since': httpDate(updatedAt - 1000) })).status).toBe(412);
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: read })).body).toEqual(created.body);
    // If-Match wins over If-Unmodified-Since; a value that is not an HTTP-date is ignored.
    expect((await withHeaders({ 'if-unmodified-since': httpDate(updatedAt - 1000), 'if-match': etag })).status).toBe(200);
    expect((await withHeaders({ 'if-unmodified-since': 'yesterday' })).status).toBe(200);
    expect((await withHeaders({ 'if-none-match': etag, 'if-unmodified-since': httpDate(Date.now() + 60_000) })).status).toBe(200);
    expect(await outboxCount()).toBe(events);
  });

  it('the form update with neither field changes nothing: same updatedAt, same ETag, If-Match still holds', async () => {
    const created = await create();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const noop = await t.http.post(`/v2/cheeses/${created.body.id}`, { headers: { ...auth, 'if-match': created.headers.get('etag')! } });
    expect(noop.status).toBe(200);
    expect(noop.body).toEqual(created.body);
    expect(noop.headers.get('etag')).toBe(created.headers.get('etag'));
    expect((await rename(created.body.id, 'Still current', created.headers.get('etag')!)).status).toBe(200);
    expect((await t.http.post(`/v2/cheeses/${created.body.id}`, { headers: { ...auth, 'if-match': created.headers.get('etag')! } })).status).toBe(412);
  });
});
