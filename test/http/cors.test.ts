import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey } from '../helpers/http.js';

/** Browser clients on other origins, when configured (CORS_ORIGINS). */
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await createTestApp({ seed: true, config: { corsOrigins: ['https://shop.example'] } });
  key = await t.key(['read:cheeses']);
});
afterAll(() => t.close());

const preflight = (origin: string, method = 'GET', headers = 'x-api-key, if-none-match') =>
  t.http.request('OPTIONS', '/v2/cheeses', {
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
const corsHeaders = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('access-control-'));
const list = (value: string | null) => (value ?? '').toLowerCase().split(/\s*,\s*/);

describe('CORS', () => {
  it('answers a preflight from an allowed origin 204, with the methods and the credential headers it may send', async () => {
    const res = await preflight('https://shop.example', 'POST', 'authorization, content-type, idempotency-key');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(list(res.headers.get('vary'))).toContain('origin');
    expect(list(res.headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining(['authorization', 'x-api-key', 'content-type', 'if-match', 'if-none-match', 'idempotency-key', 'x-confirm-delete']),
    );
    expect(list(res.headers.get('access-control-allow-methods'))).toEqual(expect.arrayContaining(['get', 'post', 'put', 'patch', 'delete']));
    // Credentials travel in headers, not cookies: nothing asks the browser to send cookies.
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets an allowed origin read the answer and the headers clients need', async () => {
    const res = await t.http.get('/v2/cheeses?limit=1', { headers: { ...apiKey(key), origin: 'https://shop.example', accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(list(res.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(['x-request-id', 'etag', 'link', 'x-total-count', 'retry-after', 'ratelimit', 'ratelimit-policy']),
    );
  });

  it('gives another origin no CORS header at all, on the preflight (204) and on the request', async () => {
    const pre = await preflight('https://evil.example');
    expect(pre.status).toBe(204);
    expect(corsHeaders(pre.headers)).toEqual([]);
    const res = await t.http.get('/v2/cheeses?limit=1', { headers: { ...apiKey(key), origin: 'https://evil.example' } });
    expect(res.status).toBe(200);
    expect(corsHeaders(res.headers)).toEqual([]);
    expect(list(res.headers.get('vary'))).toContain('origin');
  });

  it('answers an OPTIONS without Origin with Allow and no CORS header; an unknown path is still 404', async () => {
    const res = await t.http.request('OPTIONS', '/v2/cheeses/comte-24-mois');
    expect(res.status).toBe(204);
    expect(list(res.headers.get('allow'))).toEqual(expect.arrayContaining(['get', 'post', 'delete']));
    expect(corsHeaders(res.headers)).toEqual([]);
    expect((await t.http.request('OPTIONS', '/v2/nothing-here')).status).toBe(404);
    expect((await t.http.get('/v2/health')).headers.get('access-control-expose-headers')).toBeNull();
  });

  it('the docs page origin (PUBLIC_URL) is always allowed', async () => {
    expect((await preflight(t.config.publicUrl)).headers.get('access-control-allow-origin')).toBe(t.config.publicUrl);
  });
});
