import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { portOf, rawExchange } from '../helpers/raw.js';

let t: TestApp;
let auth: Record<string, string>;
let read: Record<string, string>;
beforeAll(async () => {
  ({ t, auth, read } = await createAdminTestApp());
});
afterAll(() => t.close());

const count = async (table: 'cheeses' | 'outbox') => (await t.database.db.selectFrom(table).select('id').execute()).length;
const expectError = (res: { status: number; body: any; headers: Headers }, status: number) => {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ code: status, type: expect.any(String), message: expect.any(String) });
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
};

describe('URLs and bodies are exact, or refused', () => {
  it('400 for percent-escapes that are not UTF-8, in the query and the path; nothing is stored', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Escape Test' } })).body;
    for (const url of ['/v2/cheeses?q=Caf%E9', '/v2/cheeses?q=%zz', '/v2/cheeses/Caf%E9', `/v2/cheeses/${cheese.id}?name=Caf%E9`]) {
      const res = await t.http.request(url.includes('name=') ? 'POST' : 'GET', url, { headers: auth });
      expectError(res, 400);
    }
    expect((await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: read })).body.name).toBe('Escape Test');
  });

  it('an empty body with Content-Type: application/json is no body on operations that take none', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Bodiless Form' } })).body;
    const json = { ...auth, 'content-type': 'application/json' };
    expect((await t.http.post(`/v2/cheeses/${cheese.id}?status=pending`, { headers: json, body: '' })).status).toBe(200);
    expect((await t.http.delete(`/v2/cheeses/${cheese.id}`, { headers: { ...json, 'x-confirm-delete': 'true' }, body: '' })).status).toBe(204);
    // An operation that takes a body still refuses an empty one.
    expectError(await t.http.post('/v2/cheeses', { headers: json, body: '' }), 400);
  });

  it('415 for text/plain, a non-UTF-8 charset or a content coding; 400 for bytes that are not UTF-8', async () => {
    const before = await count('cheeses');
    const post = (headers: Record<string, string>, body: string | Buffer) => t.http.post('/v2/cheeses', { headers: { ...auth, ...headers }, body });
    expectError(await post({ 'content-type': 'text/plain' }, '{"name":"Plain"}'), 415);
    expectError(await post({ 'content-type': 'application/json; charset=iso-8859-1' }, '{"name":"Latin"}'), 415);
    const gzip = await post({ 'content-type': 'application/json', 'content-encoding': 'gzip' }, '{"name":"Zipped"}');
    expectError(gzip, 415);
    expect(gzip.headers.get('accept-encoding')).toBe('identity');
    expectError(await post({ 'content-type': 'application/json' }, Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0x43, 0x61, 0x66, 0xe9, 0x22, 0x7d])), 400);
    expect((await post({ 'content-type': 'application/json; charset=UTF-8' }, '{"name":"Caf\u00e9 UTF-8"}')).status).toBe(201);
    expect(await count('cheeses')).toBe(before + 1);
  });

  it('path ids are canonical decimal integers: 0x3, 1e0, +3, 03 are 400, never another id', async () => {
    const key = await t.key(['admin']);
    const listed = (await t.http.get('/v2/api-keys', { headers: { authorization: `Bearer ${key}` } })).body.items;
    const id = listed[0].id as number;
    for (const form of [`0x${id.toString(16)}`, `${id}e0`, `+${id}`, `0${id}`, ` ${id}`]) {
      const res = await t.http.delete(`/v2/api-keys/${encodeURIComponent(form)}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status, form).toBe(400);
    }
    expect((await t.http.get('/v2/api-keys', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expectError(await t.http.get('/v2/cheeses?limit=1e1', { headers: read }), 400);
    expectError(await t.http.get('/v2/cheeses/1/images/0x1', { headers: read }), 400);
  });

  it('a static file path that escapes is 404, not 405', async () => {
    const res = await t.http.get('/docs/static/..%2F..%2Fpackage.json');
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('"dependencies"');
  });
});

describe('raw HTTP', () => {
  it('no Host: 400 in the Error shape', async () => {
    const res = await rawExchange(portOf(t.http.baseUrl), ['GET /v2/health HTTP/1.1\r\nConnection: close\r\n\r\n']);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 400, type: 'invalid_request', message: expect.stringContaining('Host') });
  });

  it('CONNECT: 405 in the Error shape, and the connection closed', async () => {
    const res = await rawExchange(portOf(t.http.baseUrl), ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']);
    expect(res.status).toBe(405);
    expect(JSON.parse(res.body)).toMatchObject({ code: 405, type: 'method_not_allowed' });
    expect(res.closed).toBe(true);
  });

  it('a declared Content-Length over the limit is 413 before any body byte is sent', async () => {
    const key = await t.key(['admin']);
    const res = await rawExchange(portOf(t.http.baseUrl), [
      `POST /v2/cheeses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n`,
    ]);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ code: 413, type: 'payload_too_large' });
  });
});

describe('slow clients are bounded', () => {
  let slow: TestApp;
  beforeAll(async () => {
    slow = await createTestApp({ config: { requestTimeoutMs: 1000, headersTimeoutMs: 800, maxConnectionsPerClient: 4 } });
  });
  afterAll(() => slow.close());

  it('a body stalled after one byte is answered 408 and closed', async () => {
    const key = await slow.key(['admin']);
    const res = await rawExchange(portOf(slow.http.baseUrl), [
      `POST /v2/cheeses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{`,
    ], 6000);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ code: 408 });
    expect(res.closed).toBe(true);
  });

  it('caps open connections per client address: the one over the cap gets 503 and is closed', async () => {
    const port = portOf(slow.http.baseUrl);
    const held = Array.from({ length: 4 }, () => rawExchange(port, ['GET /v2/health HTTP/1.1\r\nHost: x\r\n'], 1500));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await rawExchange(port, ['GET /v2/health HTTP/1.1\r\nHost: x\r\n\r\n'], 1500);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.closed).toBe(true);
    await Promise.all(held);
  });
});
