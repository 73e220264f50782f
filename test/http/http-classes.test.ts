import net from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { clientKey } from '../../src/http/request-guards.js';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { portOf, rawExchange } from '../helpers/raw.js';

/**
 * The hardening issue's defect classes, each over real HTTP through the app: every member of
 * a class answered by one rule (decisions.md, "Errors and HTTP"), never a 5xx, always the
 * Error shape. test/http/http-hardening.test.ts holds the issue's own examples.
 */
let t: TestApp;
let auth: Record<string, string>;
let read: Record<string, string>;
beforeAll(async () => {
  ({ t, auth, read } = await createAdminTestApp());
});
afterAll(() => t.close());

const expectError = (res: { status: number; body: any; headers: Headers }, status: number, label = '') => {
  expect(res.status, label).toBe(status);
  expect(res.body, label).toMatchObject({ code: status, type: expect.any(String), message: expect.any(String) });
  expect(res.headers.get('content-type'), label).toBe('application/json; charset=utf-8');
};

describe('1. slow or oversized requests never hold the server', () => {
  let slow: TestApp;
  let slowKey: string;
  let slowAuth: string;
  beforeAll(async () => {
    slow = await createTestApp({ config: { requestTimeoutMs: 3000, headersTimeoutMs: 1000, maxConnectionsPerClient: 8 } });
    slowKey = await slow.key(['admin']);
    slowAuth = `Authorization: Bearer ${slowKey}\r\n`;
  });
  afterAll(() => slow.close());

  /** A raw exchange that gives up after `waitMs` (then `closed` is false), with its Error body parsed. */
  const timed = async (chunks: (string | Buffer)[], waitMs: number) => {
    const res = await rawExchange(portOf(slow.http.baseUrl), chunks, waitMs);
    return { ...res, error: res.body.startsWith('{') ? JSON.parse(res.body) : res.body };
  };

  it('408 for stalled headers and bodies of every kind; 413 on a declared length before the body; early answers close at once; the cap refuses and never runs', async () => {
    const cheese = (await slow.http.post('/v2/cheeses', { headers: bearer(slowKey), json: { name: 'Slow Saint-Nectaire' } })).body;
    const count = async () => (await slow.database.db.selectFrom('cheeses').select('id').execute()).length;

    // Stalled: headers, a JSON body after one byte, a chunked body, a multipart upload (at once,
    // within the cap). 408, closed, by the timeout (checked every second), not held.
    const stalled = await Promise.all(
      [
        'GET /v2/health HTTP/1.1\r\nHost: x\r\nX-Slow: a',
        `POST /v2/cheeses HTTP/1.1\r\nHost: x\r\n${slowAuth}Content-Type: application/json\r\nContent-Length: 20\r\n\r\n{`,
        `POST /v2/cheeses HTTP/1.1\r\nHost: x\r\n${slowAuth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
        `POST /v2/cheeses/${cheese.id}/uploadImage HTTP/1.1\r\nHost: x\r\n${slowAuth}Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 5000\r\n\r\n--B\r\n`,
      ].map((request) => timed([request], 8000).then((res) => ({ request, res }))),
    );
    for (const { request, res } of stalled) {
      expect(res.status, request).toBe(408);
      expect(res.error).toMatchObject({ code: 408, type: 'invalid_request' });
      expect(res.closed).toBe(true);
    }

    // A declared Content-Length over the operation's limit: 413 with no body sent, on JSON, multipart and bodiless operations alike, also under Expect: 100-continue.
    for (const [target, type] of [
      ['POST /v2/cheeses', 'application/json'],
      [`POST /v2/cheeses/${cheese.id}/uploadImage`, 'multipart/form-data; boundary=B'],
      [`DELETE /v2/cheeses/${cheese.id}`, 'application/json'],
      ['GET /v2/health', 'application/json'],
    ] as const) {
      for (const expect100 of ['', 'Expect: 100-continue\r\n']) {
        const res = await timed([`${target} HTTP/1.1\r\nHost: x\r\n${slowAuth}X-Confirm-Delete: true\r\nContent-Type: ${type}\r\n${expect100}Content-Length: 50000000\r\n\r\n`], 2000);
        expect(res.status, `${target} ${expect100}`).toBe(413);
        expect(res.raw).not.toContain('100 Continue');
        expect(res.error).toMatchObject({ code: 413, type: 'payload_too_large' });
        expect(res.closed).toBe(true); // well before the request timeout (3 s)
      }
    }
    // Within the limit, 100 Continue comes when the body is wanted, and the request succeeds.
    const body = '{"name":"Continued Cantal"}';
    const continued = await new Promise<string>((resolve) => {
      const socket = net.connect(portOf(slow.http.baseUrl), '127.0.0.1');
      let received = '';
      socket.on('data', (data) => {
        received += data.toString();
        if (received.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !received.includes('201')) socket.write(body);
      });
      socket.on('close', () => resolve(received));
      socket.write(`POST /v2/cheeses HTTP/1.1\r\nHost: x\r\n${slowAuth}Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    });
    expect(continued).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);

    // An answer given before the body has arrived closes the connection at once: the rest is never awaited or drained.
    for (const early of [
      `POST /v2/cheeses HTTP/1.1\r\nHost: x\r\n${slowAuth}Content-Type: text/plain\r\nContent-Length: 20\r\n\r\n{`,
      'GET /v2/health HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n{',
      `DELETE /v2/cheeses/999999 HTTP/1.1\r\nHost: x\r\n${slowAuth}Content-Type: text/plain\r\nContent-Length: 20\r\n\r\n{`,
      `POST /v2/cheeses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{`,
    ]) {
      const res = await timed([early], 2000);
      expect(res.status, early).toBeGreaterThanOrEqual(200);
      expect(res.headers.connection).toBe('close');
      // One answer, never a later 408 on the same connection (match status lines: a request id may contain "408").
      expect(res.raw.match(/^HTTP\/1\.1 \d{3}/gm), early).toEqual([`HTTP/1.1 ${res.status}`]);
      expect(res.status, early).not.toBe(408);
      expect(res.closed, early).toBe(true); // well before the request timeout (3 s)
    }

    // The cap: eight open connections from this address (fetch's own may be among them), the next is answered 503 and its request never runs.
    const before = await count();
    const port = portOf(slow.http.baseUrl);
    const held = await Promise.all(Array.from({ length: 8 }, () => new Promise<net.Socket>((resolve) => { const s = net.connect(port, '127.0.0.1', () => resolve(s)).on('error', () => undefined); })));
    const create = JSON.stringify({ name: 'Over The Cap' });
    const refused = await timed([`POST /v2/cheeses HTTP/1.1\r\nHost: x\r\n${slowAuth}Content-Type: application/json\r\nContent-Length: ${create.length}\r\n\r\n${create}`], 3000);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.error).toMatchObject({ code: 503, type: 'service_unavailable' });
    expect(refused.closed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await count()).toBe(before);
    held.forEach((socket) => socket.destroy());
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await slow.http.get('/v2/health')).status).toBe(200);
    // Connections count per client: IPv4-mapped is IPv4, IPv6 counts by /64.
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:db8:85a3::8a2e:370:7334')).toBe(clientKey('2001:db8:85a3:0:ffff::1'));

    // Timeouts are validated together: the headers cannot have longer than the whole request.
    expect(() => loadConfig({ DATA_DIR: slow.config.dataDir, HEADERS_TIMEOUT_MS: '90000' })).toThrow(/HEADERS_TIMEOUT_MS .* must not exceed REQUEST_TIMEOUT_MS/);
    expect(loadConfig({ DATA_DIR: slow.config.dataDir, REQUEST_TIMEOUT_MS: '5000' }).headersTimeoutMs).toBe(5000);
  });
});

describe('2. percent-escapes that are not UTF-8 are a 400, in every path parameter and query parameter', () => {
  it('on every operation of the OpenAPI document, with any credential, and nothing is stored', async () => {
    const document = (await t.http.get('/v2/openapi.json')).body;
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Escaped Époisses' } })).body;
    const bad = ['Caf%E9', '%zz', 'x%', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', 'a%C3'];
    let requests = 0;
    for (const [template, operations] of Object.entries<Record<string, { parameters?: { in: string; name: string }[] }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const params = operation.parameters ?? [];
        const fill = (value: (name: string) => string) => `/v2${template.replace(/\{([^}]+)\}/g, (_, name: string) => value(name))}`;
        const real = fill((name) => (name === 'username' ? 'admin' : String(cheese.id)));
        const targets = [
          ...params.filter((p) => p.in === 'path').flatMap((p) => bad.map((b) => fill((name) => (name === p.name ? b : name === 'username' ? 'admin' : String(cheese.id))))),
          ...params.filter((p) => p.in === 'query').flatMap((p) => bad.map((b) => `${real}?${p.name}=${b}`)),
          ...bad.map((b) => `${real}?${b}=1`),
        ];
        for (const target of targets) {
          const res = await t.http.request(method.toUpperCase(), target, { headers: { ...auth, 'x-confirm-delete': 'true' } });
          expectError(res, 400, `${method.toUpperCase()} ${target}`);
          requests++;
        }
      }
    }
    expect(requests).toBeGreaterThan(200);
    // The issue's own: the form update takes its name from the query.
    const form = await t.http.post(`/v2/cheeses/${cheese.id}?name=Caf%E9`, { headers: auth });
    expectError(form, 400);
    expect(form.body.errors).toEqual([{ field: 'querystring', message: 'percent-escapes must encode UTF-8' }]);
    const path = await t.http.get('/v2/cheeses/Caf%E9', { headers: read });
    expect(path.body.errors).toEqual([{ field: 'path', message: 'percent-escapes must encode UTF-8' }]);
    expect((await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: read })).body.name).toBe('Escaped Époisses');
    expect((await t.http.get('/v2/cheeses?q=%C3%A9poisses', { headers: read })).body.items.map((c: { id: number }) => c.id)).toContain(cheese.id);
  });
});

describe('3. an empty body on an operation that takes none is no body', () => {
  it('whatever its Content-Type, charset, coding or framing; operations that take a body still refuse an empty one', async () => {
    const document = (await t.http.get('/v2/openapi.json')).body;
    const bodiless: [string, string][] = [];
    for (const [path, operations] of Object.entries<Record<string, { requestBody?: unknown }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (['post', 'put', 'patch', 'delete'].includes(method) && !operation.requestBody) bodiless.push([method.toUpperCase(), `/v2${path.replace(/\{[^}]+\}/g, '999999')}`]);
      }
    }
    expect(bodiless.map(([m, p]) => `${m} ${p}`)).toEqual(expect.arrayContaining(['POST /v2/cheeses/999999', 'DELETE /v2/cheeses/999999', 'DELETE /v2/api-keys/999999']));
    const headerSets: Record<string, string>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json; charset=utf-8' },
      { 'content-type': 'application/json; charset=iso-8859-1' },
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/octet-stream' },
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    ];
    const port = portOf(t.http.baseUrl);
    for (const [method, path] of bodiless) {
      for (const headers of headerSets) {
        const res = await t.http.request(method, path, { headers: { ...auth, 'x-confirm-delete': 'true', ...headers }, body: '' });
        const label = `${method} ${path} ${JSON.stringify(headers)}`;
        expect(res.status, label).toBeLessThan(500);
        expect(res.status, label).not.toBe(415);
        expect(res.body.message ?? '', label).not.toMatch(/body|JSON|UTF-8|charset|Content-Encoding/);
      }
      // Chunked, with no chunk: no body either.
      const chunked = await rawExchange(port, [`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nX-Confirm-Delete: true\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`]);
      expect(chunked.status, `${method} ${path} chunked`).not.toBe(415);
      expect(chunked.status).toBeLessThan(500);
    }

    // The real operations do their work.
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Bodiless Brie' } })).body;
    const plain = { ...auth, 'content-type': 'text/plain' };
    expect((await t.http.post(`/v2/cheeses/${cheese.id}?status=pending`, { headers: { ...auth, 'content-type': 'application/json; charset=latin1' }, body: '' })).body.status).toBe('pending');
    expect((await t.http.post(`/v2/cheeses/${cheese.id}?status=sold`, { headers: plain, body: '' })).body.status).toBe('sold');
    expect((await t.http.delete(`/v2/cheeses/${cheese.id}`, { headers: { ...plain, 'x-confirm-delete': 'true' }, body: '' })).status).toBe(204);
    const key = await t.key(['admin']);
    const keyId = (await t.http.get('/v2/api-keys', { headers: bearer(key) })).body.items[0].id;
    expect((await t.http.delete(`/v2/api-keys/${keyId}`, { headers: { ...bearer(key), 'content-type': 'application/x-www-form-urlencoded' }, body: '' })).status).toBe(204);

    // A body of another type where none is taken is still a 415; an empty body where one is taken still a 400 or 415.
    expectError(await t.http.delete('/v2/cheeses/999999', { headers: { ...plain, 'x-confirm-delete': 'true' }, body: 'hello' }), 415);
    expectError(await t.http.post('/v2/cheeses', { headers: { ...auth, 'content-type': 'application/json' }, body: '' }), 400);
    expectError(await t.http.post('/v2/cheeses', { headers: plain, body: '' }), 415);
    expectError(await t.http.post('/v2/cheeses/1/uploadImage', { headers: { ...auth, 'content-type': 'application/json' }, body: '' }), 415);
  });
});

describe('4. a body is JSON in UTF-8, uncoded, or refused', () => {
  it('415 for another type, charset, content or transfer coding; 400 for bytes that are not UTF-8, in JSON and multipart text; nothing stored', async () => {
    const port = portOf(t.http.baseUrl);
    const cheeses = async () => (await t.database.db.selectFrom('cheeses').select('id').execute()).length;
    const before = await cheeses();
    const post = (headers: Record<string, string>, body: string | Buffer) => t.http.post('/v2/cheeses', { headers: { ...auth, ...headers }, body });
    const json = (name: string) => `{"name":"${name}"}`;

    for (const type of ['text/plain', 'text/json', 'application/jsonx', 'application/json-seq', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      expectError(await post({ 'content-type': type }, json('Typed')), 415, type);
    }
    for (const type of ['application/json; charset=iso-8859-1', 'application/json;charset="utf-16"', 'application/json; charset=utf-8; charset=latin1', 'application/json; charset=', 'application/json; charset=""']) {
      expectError(await post({ 'content-type': type }, json('Charset')), 415, type);
    }
    for (const coding of ['gzip', 'br', 'deflate', 'identity, gzip']) {
      const res = await post({ 'content-type': 'application/json', 'content-encoding': coding }, json('Coded'));
      expectError(res, 415, coding);
      expect(res.headers.get('accept-encoding')).toBe('identity');
    }
    const chunkedGzip = await rawExchange(port, [`POST /v2/cheeses HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n11\r\n${json('Transferred')}\r\n0\r\n\r\n`]);
    expect(chunkedGzip.status).toBe(415);
    expect(JSON.parse(chunkedGzip.body)).toMatchObject({ code: 415, type: 'unsupported_media_type' });

    const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    for (const body of [
      bytes('{"name":"Caf', [0xe9], '"}'), // Latin-1
      bytes('{"na', [0xff], 'me":"x"}'), // in a key
      bytes('{"name":"Caf', [0xc3], '"}'), // a truncated sequence
      bytes('{"name":"', [0xc0, 0xaf], '"}'), // overlong
      bytes('{"name":"', [0xed, 0xa0, 0x80], '"}'), // an encoded surrogate (CESU-8)
      Buffer.from('\ufeff{"name":"UTF-16"}', 'utf16le'),
    ]) {
      expectError(await post({ 'content-type': 'application/json' }, body), 400, body.toString('latin1'));
    }

    // Multipart text parts: the parser would make U+FFFD of what is not UTF-8.
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Multipart Munster' } })).body;
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fc0' } }).png().toBuffer();
    const boundary = 'hardening-boundary';
    const multipart = (caption: Buffer) =>
      bytes(`--${boundary}\r\nContent-Disposition: form-data; name="caption"\r\n\r\n`, [...caption], `\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`, [...png], `\r\n--${boundary}--\r\n`);
    const upload = (caption: Buffer) => t.http.post(`/v2/cheeses/${cheese.id}/uploadImage`, { headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: multipart(caption) });
    const refused = await upload(bytes('Caf', [0xe9]));
    expectError(refused, 400);
    expect(refused.body.errors).toEqual([{ field: 'caption', message: 'must be UTF-8 text' }]);
    expect(await t.database.db.selectFrom('cheese_images').select('id').execute()).toHaveLength(0);
    expect((await upload(Buffer.from('Café, bien affiné'))).body.caption).toBe('Café, bien affiné');

    expect(await cheeses()).toBe(before + 1);
    expect((await post({ 'content-type': 'application/json; charset=UTF-8' }, json('Café UTF-8'))).status).toBe(201);
  });
});

describe('5. raw HTTP that fetch cannot send gets an answer in the Error shape', () => {
  const exchange = (request: string) => rawExchange(portOf(t.http.baseUrl), [request]);
  const expectRawError = (res: { status: number; headers: Record<string, string>; body: string }, status: number, label: string) => {
    expect(res.status, label).toBe(status);
    expect(res.headers['content-type'], label).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body), label).toMatchObject({ code: status, type: expect.any(String), message: expect.any(String) });
  };

  it('Host missing (HTTP/1.1), repeated or malformed is a 400; CONNECT a 405 and closed; a static path that finds nothing a 404', async () => {
    for (const path of ['/v2/health', '/v2/nowhere', '/docs', `/v2/cheeses?q=x`]) {
      const res = await exchange(`GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      expectRawError(res, 400, `no Host ${path}`);
      expect(JSON.parse(res.body).message).toContain('Host');
    }
    for (const hosts of ['Host: a\r\nHost: b\r\n', 'Host: a\r\nhost: a\r\n', 'Host: a b/c\r\n', 'Host: user@example.com\r\n', 'Host: example.com/x\r\n', 'Host: [::1\r\n']) {
      expectRawError(await exchange(`GET /v2/health HTTP/1.1\r\n${hosts}Connection: close\r\n\r\n`), 400, hosts);
    }
    for (const hosts of ['Host: example.com\r\n', 'Host: example.com:8080\r\n', 'Host: [::1]:8080\r\n', 'Host: 127.0.0.1\r\n', 'Host:\r\n']) {
      expect((await exchange(`GET /v2/health HTTP/1.1\r\n${hosts}Connection: close\r\n\r\n`)).status, hosts).toBe(200);
    }
    expect((await exchange('GET /v2/health HTTP/1.0\r\n\r\n')).status).toBe(200);

    for (const connect of ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 'CONNECT example.com:443 HTTP/1.1\r\n\r\n', 'CONNECT 127.0.0.1:22 HTTP/1.0\r\n\r\nSSH-2.0-x\r\n']) {
      const res = await exchange(connect);
      expectRawError(res, 405, connect);
      expect(res.closed).toBe(true);
    }

    for (const path of ['/docs/static/..%2F..%2Fpackage.json', '/docs/static/../../package.json', '/docs/static/%2e%2e/%2e%2e/package.json', '/docs/static/.%2e/.%2e/package.json', '/docs/static/..%5c..%5cpackage.json', '/docs/static/%2e%2e%2f%2e%2e%2fpackage.json', '/docs/static/a%00.js', '/docs/static/nope.js']) {
      for (const method of ['GET', 'HEAD']) {
        const res = await exchange(`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body).not.toContain('"dependencies"');
        if (method === 'GET') expectRawError(res, 404, path);
      }
    }
    expect((await exchange('GET /docs/static/swagger-ui.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(200);
  });
});

describe('6. integer path ids are canonical decimal, on every route that takes one', () => {
  it('any other spelling of an id (leading zeros, sign, exponent, hex, spaces, -0, beyond 2^53) is a 400 and names no resource', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Canonical Comté' } })).body;
    const key = await t.key(['admin']);
    const keyId = (await t.http.get('/v2/api-keys', { headers: bearer(key) })).body.items[0].id as number;
    const client = (await t.http.post('/v2/oauth-clients', { headers: auth, json: { name: 'Canonical', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] } })).body;
    const username = 'canonical.customer';
    const password = 'a long enough secret 4 tests';
    expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password } })).status).toBe(201);
    const customer = bearer((await t.http.post('/v2/customer/login', { json: { username, password } })).body.token);
    const address = (await t.http.post(`/v2/customer/${username}/addresses`, { headers: customer, json: { label: 'Home', line1: '1 rue X', city: 'Lyon', postalCode: '69002', country: 'FR' } })).body;

    const spellings = (id: number) => [`0${id}`, `00${id}`, `0x${id.toString(16)}`, `${id}e0`, `+${id}`, `%20${id}`, `${id}%20`, `${id}.0`];
    // Every route with an integer or id-or-slug (`slugs`) path parameter.
    const routes: { method: string; path: (id: string) => string; id: number; headers: Record<string, string>; slugs?: boolean }[] = [
      { method: 'GET', path: (id) => `/v2/cheeses/${id}`, id: cheese.id, headers: read, slugs: true },
      { method: 'POST', path: (id) => `/v2/cheeses/${id}?status=pending`, id: cheese.id, headers: auth, slugs: true },
      { method: 'DELETE', path: (id) => `/v2/cheeses/${id}`, id: cheese.id, headers: { ...auth, 'x-confirm-delete': 'true' }, slugs: true },
      { method: 'POST', path: (id) => `/v2/cheeses/${id}/uploadImage`, id: cheese.id, headers: auth, slugs: true },
      { method: 'GET', path: (id) => `/v2/cheeses/${id}/images/1`, id: cheese.id, headers: {} },
      { method: 'GET', path: (id) => `/v2/cheeses/1/images/${id}/thumbnail`, id: 1, headers: {} },
      { method: 'DELETE', path: (id) => `/v2/api-keys/${id}`, id: keyId, headers: bearer(key) },
      { method: 'DELETE', path: (id) => `/v2/oauth-clients/${id}`, id: client.id, headers: auth },
      { method: 'PATCH', path: (id) => `/v2/customer/${username}/addresses/${id}`, id: address.id, headers: customer },
      { method: 'DELETE', path: (id) => `/v2/customer/${username}/addresses/${id}`, id: address.id, headers: customer },
    ];
    for (const { method, path, id, headers, slugs } of routes) {
      for (const spelling of spellings(id)) {
        const res = await t.http.request(method, path(spelling), { headers, ...(method === 'PATCH' ? { json: { label: 'Moved' } } : {}) });
        const label = `${method} ${path(spelling)}`;
        // To an id-or-slug parameter `0x1` and `1e0` are slugs (of no cheese); every other spelling is a 400.
        if (slugs && /[a-z]/.test(spelling)) expectError(res, res.status === 415 ? 415 : 404, label);
        else expectError(res, 400, label);
      }
    }
    for (const path of ['/v2/api-keys/9007199254740993', '/v2/api-keys/-0', '/v2/cheeses/1/images/99999999999999999999']) {
      expectError(await t.http.request(path.startsWith('/v2/api-keys') ? 'DELETE' : 'GET', path, { headers: bearer(key) }), 400, path);
    }
    // Query numbers too: -0 is not 0, and a repeated value is checked like a single one.
    expectError(await t.http.get('/v2/cheeses?aged_weeks_min=-0', { headers: read }), 400);
    expectError(await t.http.get('/v2/cheeses/seasonal?month=06', { headers: read }), 400);

    // Nothing was touched under another spelling.
    const after = await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: read });
    expect(after.body).toMatchObject({ id: cheese.id, status: 'available', photoUrls: [] });
    expect((await t.http.get('/v2/api-keys', { headers: bearer(key) })).body.items.find((k: { id: number }) => k.id === keyId).revokedAt ?? null).toBeNull();
    expect((await t.http.get('/v2/oauth-clients', { headers: auth })).body.items.map((c: { id: number }) => c.id)).toContain(client.id);
    expect((await t.http.get(`/v2/customer/${username}/addresses`, { headers: customer })).body.items).toMatchObject([{ id: address.id, label: 'Home' }]);
    // The canonical spelling still works.
    expect((await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: read })).status).toBe(200);
    expect((await t.http.get(`/v2/cheeses/${cheese.slug}`, { headers: read })).status).toBe(200);
  });
});
