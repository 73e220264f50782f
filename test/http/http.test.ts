import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';

let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await createTestApp();
  admin = await t.key(['admin']);
});
afterAll(() => t.close());

async function cheeseCount(): Promise<number> {
  return (await t.database.db.selectFrom('cheeses').select('id').execute()).length;
}

describe('error model (decisions.md §9)', () => {
  it('404 for an unknown route, in the Error shape', async () => {
    const res = await t.http.get('/v2/no-such-thing', { headers: apiKey(admin) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, type: 'not_found', message: expect.stringContaining('/v2/no-such-thing') });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('405 with Allow for a known path and a wrong method', async () => {
    const res = await t.http.request('PATCH', '/v2/cheeses', { headers: bearer(admin) });
    expect(res.status).toBe(405);
    expect(res.body.type).toBe('method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST, PUT');
    const byId = await t.http.request('PUT', '/v2/cheeses/12', { headers: bearer(admin) });
    expect(byId.status).toBe(405);
    expect(byId.headers.get('allow')).toBe('DELETE, GET, HEAD, POST');
  });

  it('400 for malformed JSON and for an empty JSON body; nothing is created', async () => {
    const before = await cheeseCount();
    for (const body of ['{"name": ', '', 'null', '[1,2']) {
      const res = await t.http.post('/v2/cheeses', { headers: { ...bearer(admin), 'content-type': 'application/json' }, body });
      expect(res.status, `body ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.code).toBe(res.status);
    }
    const malformed = await t.http.post('/v2/cheeses', { headers: { ...bearer(admin), 'content-type': 'application/json' }, body: '{"name": ' });
    expect(malformed.body).toMatchObject({ code: 400, type: 'invalid_request' });
    expect(await cheeseCount()).toBe(before);
  });

  it('413 for a body over the limit, 415 for an unsupported content type', async () => {
    const huge = JSON.stringify({ name: 'x', tastingNotes: 'y'.repeat(1_100_000) });
    const tooLarge = await t.http.post('/v2/cheeses', { headers: { ...bearer(admin), 'content-type': 'application/json' }, body: huge });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.type).toBe('payload_too_large');
    const xml = await t.http.post('/v2/cheeses', { headers: { ...bearer(admin), 'content-type': 'application/xml' }, body: '<cheese/>' });
    expect(xml.status).toBe(415);
    expect(xml.body.type).toBe('unsupported_media_type');
  });

  it('400 for bad query and path parameters, with the parameter named', async () => {
    const res = await t.http.get('/v2/cheeses?limit=1000', { headers: apiKey(admin) });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('limit');
    const path = await t.http.get(`/v2/cheeses/${'a'.repeat(300)}`, { headers: apiKey(admin) });
    expect(path.status).toBe(400);
  });

  it('422 for a body that fails validation, listing every field', async () => {
    const res = await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { stinkinessRating: 11, colour: 'blue' } });
    expect(res.status).toBe(422);
    expect(res.body.type).toBe('validation_failed');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('name');
  });

  it('the same key in X-API-Key and Authorization is that one key (the customer issue reverses the 400 of the foundation)', async () => {
    const res = await t.http.get('/v2/cheeses', { headers: { ...apiKey(admin), ...bearer(admin) } });
    expect(res.status).toBe(200);
  });
});

describe('request ids', () => {
  it('echoes a safe X-Request-Id and makes one otherwise', async () => {
    const given = await t.http.get('/v2/health', { headers: { 'x-request-id': 'client-abc-123' } });
    expect(given.headers.get('x-request-id')).toBe('client-abc-123');
    const unsafe = await t.http.get('/v2/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const error = await t.http.get('/v2/nowhere');
    expect(error.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('GET /v2/health', () => {
  it('reports version, uptime and the database, without credentials', async () => {
    const res = await t.http.get('/v2/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', version: '2.4.0', environment: 'development', checks: { database: { status: 'up' } } });
    expect(typeof res.body.uptimeSeconds).toBe('number');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers 503 when the database is unreachable', async () => {
    const other = await createTestApp();
    await other.database.close();
    const res = await other.http.get('/v2/health');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: 'unavailable', checks: { database: { status: 'down' } } });
    expect(res.text).not.toMatch(/SQLITE|ECONNREFUSED|at /);
    await other.close();
  });
});

describe('OpenAPI', () => {
  it('serves the 3.1 document with generated security for each operation and the UI at /docs', async () => {
    const res = await t.http.get('/v2/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.paths['/cheeses/{cheeseId}'].get.security).toEqual([{ api_key: [] }, { api_key_bearer: [] }]);
    expect(res.body.paths['/cheeses/{cheeseId}'].get.description).toContain('Needs the `read:cheeses` scope.');
    expect(res.body.paths['/cheeses'].post.security).toEqual([{ cheesy_oauth: ['write:cheeses'] }, { bearer_auth: [] }, { api_key_bearer: [] }]);
    expect(res.body.components.securitySchemes.cheesy_oauth.type).toBe('oauth2');
    expect(res.body.paths['/health'].get.security).toEqual([]);
    const docs = await fetch(`${t.http.baseUrl}/docs`, { redirect: 'manual' });
    expect([200, 302]).toContain(docs.status);
  });
});

describe('text neither database stores faithfully', () => {
  it('refuses U+0000 and lone surrogates the same way on both dialects, and stores nothing', async () => {
    const before = await cheeseCount();
    for (const name of ['a\u0000b', 'lone \ud800 surrogate']) {
      const res = await t.http.post('/v2/cheeses', { headers: { ...bearer(admin), 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field: 'name', message: 'must not contain U+0000 or unpaired surrogates' }]);
    }
    expect((await t.http.get('/v2/cheeses?q=%ED%A0%80', { headers: apiKey(admin) })).status).toBeLessThan(500);
    expect((await t.http.get('/v2/cheeses?country=a%00b', { headers: apiKey(admin) })).status).toBe(400);
    expect(await cheeseCount()).toBe(before);
  });
});

describe('authentication comes first', () => {
  it('answers 401, not 422, to an anonymous invalid body, and 401 to an anonymous upload', async () => {
    const res = await t.http.post('/v2/cheeses', { json: { stinkinessRating: 'very' } });
    expect(res.status).toBe(401);
    const data = new FormData();
    data.append('file', new Blob([new Uint8Array(2 * 1024 * 1024)]), 'big.jpg');
    const upload = await t.http.post('/v2/cheeses/1/uploadImage', { body: data });
    expect(upload.status).toBe(401);
    // Refused unread: the connection is closed rather than left holding the upload.
    expect(upload.headers.get('connection')).toBe('close');
  });
});
