import zlib from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';
import { nodeRequest, portOf, type NodeResponse } from '../helpers/raw.js';

/**
 * Large answers go out compressed when the client accepts it (issue 28 §2). node:http, not
 * fetch: fetch decompresses by itself and hides what was sent.
 */
let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await createTestApp({ seed: true });
  admin = `Bearer ${await t.key(['admin'])}`;
});
afterAll(() => t.close());

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') => nodeRequest(portOf(t.http.baseUrl), method, path, headers);

const decoded = (answer: NodeResponse): Buffer => {
  switch (answer.headers['content-encoding']) {
    case 'br':
      return zlib.brotliDecompressSync(answer.bytes);
    case 'gzip':
      return zlib.gunzipSync(answer.bytes);
    default:
      return answer.bytes;
  }
};

/** The same answer in every coding a client may ask for: decoded, the identity bytes; each coding its own ETag; Vary and Content-Length right. */
async function expectCodings(path: string, headers: Record<string, string> = {}) {
  const identity = await get(path, headers);
  expect(identity.status).toBe(200);
  expect(identity.headers['content-encoding']).toBeUndefined();
  expect(identity.headers.vary).toMatch(/Accept-Encoding/);
  const cases: [string | undefined, 'br' | 'gzip' | undefined][] = [
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.2, identity;q=0.8', undefined],
    ['identity', undefined],
    ['br;q=0, gzip;q=0', undefined],
    ['*', 'br'],
    [undefined, undefined],
  ];
  const tags = new Map<string | undefined, string>();
  for (const [acceptEncoding, coding] of cases) {
    const answer = await get(path, { ...headers, ...(acceptEncoding !== undefined && { 'accept-encoding': acceptEncoding }) });
    expect(answer.status, acceptEncoding).toBe(200);
    expect(answer.headers['content-encoding'], acceptEncoding).toBe(coding);
    expect(Number(answer.headers['content-length'] ?? answer.bytes.length), acceptEncoding).toBe(answer.bytes.length);
    expect(decoded(answer).equals(identity.bytes), acceptEncoding).toBe(true);
    if (coding) expect(answer.bytes.length).toBeLessThan(identity.bytes.length / 2);
    expect(answer.headers.vary).toMatch(/Accept-Encoding/);
    const tag = answer.headers.etag!;
    if (tags.has(coding)) expect(tag).toBe(tags.get(coding));
    tags.set(coding, tag);
  }
  // Three representations, three strong tags.
  expect(new Set(tags.values()).size).toBe(3);
  return { identity, tags };
}

describe('large answers are compressed in the coding the client prefers, decoding to the identity bytes', () => {
  it('the OpenAPI document', async () => {
    const { identity } = await expectCodings('/v2/openapi.json');
    expect(identity.bytes.length).toBeGreaterThan(100_000);
    expect(JSON.parse(identity.text).openapi).toBe('3.1.0');
  });

  it('a JSON list, from the handler and again from the read cache', async () => {
    const first = await expectCodings('/v2/cheeses?limit=100', { authorization: admin });
    expect(first.identity.body.items.length).toBeGreaterThan(5);
  });

  it('a list compressed before a change is not served after it: the compressed bytes follow the content', async () => {
    const path = '/v2/cheeses?limit=100&sort=name';
    const before = await get(path, { authorization: admin, 'accept-encoding': 'br' });
    expect(before.headers['content-encoding']).toBe('br');
    const created = await t.http.post('/v2/cheeses', { headers: { authorization: admin }, json: { name: 'Aaa Compressed Fresh' } });
    expect(created.status).toBe(201);
    const after = await get(path, { authorization: admin, 'accept-encoding': 'br' });
    expect(after.headers['content-encoding']).toBe('br');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(decoded(after).toString()).toContain('Aaa Compressed Fresh');
    expect(decoded(before).toString()).not.toContain('Aaa Compressed Fresh');
    // Asked again, the same bytes (from the compressed cache) still decode to the current list.
    const again = await get(path, { authorization: admin, 'accept-encoding': 'br' });
    expect(again.bytes.equals(after.bytes)).toBe(true);
  });

  it('a CSV export', async () => {
    const { identity } = await expectCodings('/v2/cheeses?limit=100', { authorization: admin, accept: 'text/csv' });
    expect(identity.headers['content-type']).toBe('text/csv; charset=utf-8');
  });

  it('a dashboard page and the docs page\'s files', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn(customer.username, customer.password);
    // Each render carries a new CSRF token: compared with the tokens masked.
    const masked = (html: string) => html.replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf" value=""');
    const identity = await get('/dashboard/keys', { cookie: browser.cookieHeader() });
    expect(identity.headers['content-type']).toMatch(/^text\/html/);
    expect(identity.bytes.length).toBeGreaterThan(1024);
    for (const coding of ['gzip', 'br'] as const) {
      const page = await get('/dashboard/keys', { cookie: browser.cookieHeader(), 'accept-encoding': coding });
      expect(page.headers['content-encoding']).toBe(coding);
      expect(Number(page.headers['content-length'])).toBe(page.bytes.length);
      expect(page.headers.vary).toMatch(/Accept-Encoding/);
      expect(masked(decoded(page).toString('utf8'))).toBe(masked(identity.text));
    }
    await expectCodings('/docs/static/swagger-ui.css');
    await expectCodings('/docs/json');
    // The same document as YAML (application/x-yaml, 700 KB): sent uncompressed before probe 28.
    const yaml = (await expectCodings('/docs/yaml')).identity;
    expect(yaml.headers['content-type']).toMatch(/yaml/);
    expect(yaml.bytes.length).toBeGreaterThan(100_000);
  });

  it('HEAD says what GET sends: the same coding, length and ETag, no body', async () => {
    for (const acceptEncoding of ['gzip', 'br', 'identity']) {
      const headers = { 'accept-encoding': acceptEncoding };
      const [full, head] = [await get('/v2/openapi.json', headers), await get('/v2/openapi.json', headers, 'HEAD')];
      expect(head.status).toBe(200);
      expect(head.bytes.length).toBe(0);
      for (const name of ['content-encoding', 'content-length', 'etag', 'vary']) expect(head.headers[name], `${acceptEncoding} ${name}`).toBe(full.headers[name]);
    }
  });
});

describe('what is not compressed', () => {
  it('an answer under 1 KB, unless the client refuses identity', async () => {
    const small = await get('/v2/health', { 'accept-encoding': 'gzip, br' });
    expect(small.status).toBe(200);
    expect(small.bytes.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    const refused = await get('/v2/health', { 'accept-encoding': 'gzip, identity;q=0' });
    expect(refused.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decoded(refused).toString('utf8'))).toMatchObject({ status: small.body.status });
  });

  it('an image, however large and whatever the client accepts', async () => {
    const photo = await sharp({ create: { width: 160, height: 120, channels: 3, background: { r: 200, g: 180, b: 60 }, noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png().toBuffer();
    const data = new FormData();
    data.append('file', new Blob([new Uint8Array(photo)], { type: 'image/png' }), 'noisy.png');
    const uploaded = await t.http.post('/v2/cheeses/ossau-iraty/uploadImage', { headers: { authorization: admin }, body: data });
    expect(uploaded.status, uploaded.text).toBeLessThan(300);
    const answer = await get(new URL(uploaded.body.imageUrl).pathname, { 'accept-encoding': 'gzip, br', authorization: admin });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('image/png');
    expect(answer.bytes.length).toBeGreaterThan(1024);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.bytes.equals(photo)).toBe(true);
  });
});

describe('ETags of compressed answers', () => {
  it('If-None-Match is 304 only for the tag of the representation this client gets', async () => {
    const tags: Record<string, string> = Object.fromEntries(await Promise.all(['gzip', 'br', 'identity'].map(async (coding) => [coding, (await get('/v2/openapi.json', { 'accept-encoding': coding })).headers.etag!])));
    expect(tags.gzip).toMatch(/^"[^"]+-gzip"$/);
    for (const [coding, tag] of Object.entries(tags)) {
      const same = await get('/v2/openapi.json', { 'accept-encoding': coding, 'if-none-match': tag });
      expect(same.status, coding).toBe(304);
      expect(same.headers.etag).toBe(tag);
      expect(same.headers.vary).toMatch(/Accept-Encoding/);
      expect(same.bytes.length).toBe(0);
      // The tag of another coding does not validate this one: the client gets what it asked for.
      const other = await get('/v2/openapi.json', { 'accept-encoding': coding, 'if-none-match': coding === 'gzip' ? tags.br! : tags.gzip! });
      expect(other.status, coding).toBe(200);
      expect(other.headers.etag).toBe(tag);
    }
  });

  it('a write takes in If-Match the tag a compressed read gave', async () => {
    const created = await t.http.post('/v2/cheeses', { headers: { authorization: admin }, json: { name: 'Tagged In Transit' } });
    const read = await get(`/v2/cheeses/${created.body.id}`, { authorization: admin, 'accept-encoding': 'gzip, identity;q=0' });
    expect(read.headers['content-encoding']).toBe('gzip');
    expect(read.headers.etag).toBe(`${created.headers.get('etag')!.slice(0, -1)}-gzip"`);
    const write = (ifMatch: string) => nodeRequest(portOf(t.http.baseUrl), 'POST', `/v2/cheeses/${created.body.id}?name=Renamed%20${Date.now()}`, { authorization: admin, 'if-match': ifMatch });
    expect((await write(read.headers.etag!)).status).toBe(200);
    // The tag is of the old state now.
    expect((await write(read.headers.etag!)).status).toBe(412);
  });
});

describe('the OpenAPI document counts against the anonymous rate limit', () => {
  it('repeated anonymous requests for it end in 429, where /v2/health stays free', async () => {
    const limited = await createTestApp({ config: { rateLimits: { enabled: true, free: { perHour: 5, burst: 3 }, pro: { perHour: 10_000, burst: 100 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1000 } } });
    try {
      const port = portOf(limited.http.baseUrl);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await nodeRequest(port, 'GET', '/v2/openapi.json', { 'accept-encoding': 'gzip' })).status);
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses).toContain(429);
      const refused = await nodeRequest(port, 'GET', '/v2/openapi.json');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toMatchObject({ code: 429, type: expect.any(String) });
      expect((await nodeRequest(port, 'GET', '/docs/json')).status).toBe(429);
      expect((await nodeRequest(port, 'GET', '/v2/health')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
