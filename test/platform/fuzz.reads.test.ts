import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { credentials, extraHeaders, headerValue, hostileText, pathSegment, pct, queryString, utf8, withControlChar } from './fuzz.arbitraries.js';
import { assertSafe, expectBothSides, fingerprint, resetCoverage, send, type RawRequest } from './fuzz.support.js';

// Property-based robustness of every read operation and of the HTTP layer itself: no input
// yields a 5xx, a stack trace or an error outside the Error schema, and reads change nothing.
// fast-check prints the seed and the shrunk counterexample of any failure.

const RUNS = 150;
const TIMEOUT = 60_000;
const BOOL = ['true', 'false', '1', '0'];
/** Each list parameter with values that pass validation (a real cursor is added once the app runs). */
const LIST: Record<string, string[]> = {
  cursor: [],
  limit: ['1', '5', '100', '0', '101'],
  status: ['available', 'available,sold', 'pending', ' sold , pending ', 'gone'],
  sort: ['name', '-name', 'createdAt', '-updated_at', 'price_per_kg', '-agedWeeks', 'stinkiness'],
  order: ['asc', 'desc'],
  country: ['France', 'italy', 'Royaume-Uni'],
  texture: ['blue', 'hard', 'semi-soft'],
  milk: ['cow', 'goat', 'sheep'],
  aged_weeks_min: ['0', '10', '10000'],
  agedWeeksMin: ['4', '52'],
  organic: BOOL,
  seasonal: BOOL,
  inStock: BOOL,
  in_stock: BOOL,
  category: ['Blue', 'alpine', 'Bloomy rind'],
  tags: ['raw-milk', 'pdo,raw-milk', 'ash', 'Raw Milk'],
  q: ['comte', 'saint nectaire', 'Comté', 'brie de', 'FRANCE'],
  fields: ['id,name', 'name,price_per_kg,stockQuantityKg', 'tags,category', 'slug,nope'],
};

let t: TestApp;
let port: number;
let key: string;
let ids: string[];
const safe = async (req: RawRequest) => assertSafe(req, await send(port, req));

beforeAll(async () => {
  t = await createTestApp({ seed: true });
  port = Number(new URL(t.http.baseUrl).port);
  key = await t.key(['admin']);
  const rows = await t.database.db.selectFrom('cheeses').select(['id', 'slug']).orderBy('id').limit(4).execute();
  ids = [...rows.map((r) => String(r.id)), ...rows.map((r) => r.slug), rows[0]!.slug.toUpperCase()];
  const page = await t.http.get('/v2/cheeses?limit=2', { headers: { authorization: `Bearer ${key}` } });
  LIST.cursor!.push(page.body.nextCursor, `${page.body.nextCursor}x`, page.body.nextCursor.split('.')[0]);
});
afterAll(() => t.close());

/** Read methods and a few others that no read route takes (never DELETE/POST/PUT: those write). */
const readMethod = fc.oneof(
  { weight: 12, arbitrary: fc.constant('GET') },
  { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PATCH', 'TRACE', 'SEARCH', 'PROPFIND', 'get') },
);
const anyBody = fc.option(
  fc.tuple(fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'), fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v)), fc.string())),
  { freq: 6, nil: undefined },
);

/** One exact path most of the time, else a near miss (trailing slash, case, doubled slash). */
const near = (path: string, ...misses: string[]) => fc.oneof({ weight: 8, arbitrary: fc.constant(path) }, { weight: 1, arbitrary: fc.constantFrom(`${path}/`, path.toUpperCase(), `/${path}`, ...misses) });

// Each operation's own query keys: any other key is refused (400), so the generators add those themselves.
const READS: { op: string; path: () => fc.Arbitrary<string>; query: () => Record<string, string[]> }[] = [
  { op: 'GET /v2/cheeses', path: () => near('/v2/cheeses'), query: () => LIST },
  { op: 'GET /v2/cheeses/seasonal', path: () => near('/v2/cheeses/seasonal'), query: () => ({ ...LIST, month: ['1', '6', '12', '0', '13'] }) },
  { op: 'GET /v2/cheeses/findByStatus', path: () => near('/v2/cheeses/findByStatus'), query: () => ({ status: LIST.status! }) },
  { op: 'GET /v2/cheeses/findByTags', path: () => near('/v2/cheeses/findByTags'), query: () => ({ tags: LIST.tags! }) },
  { op: 'GET /v2/cheeses/{cheeseId}', path: () => pathSegment(ids).map((s) => `/v2/cheeses/${s}`), query: () => ({ fields: LIST.fields!, id: ids }) },
  { op: 'GET /v2/store/inventory', path: () => near('/v2/store/inventory', '/v2/store'), query: () => ({ status: LIST.status! }) },
  { op: 'GET /v2/api-keys', path: () => near('/v2/api-keys'), query: () => ({ limit: LIST.limit!, id: ids }) },
];

describe('fuzz: read operations', () => {
  for (const read of READS) {
    it(`${read.op}: any path, query, headers and body answer < 500 with an Error body, and change nothing`, { timeout: TIMEOUT }, async () => {
      const before = await fingerprint(t.database.db);
      resetCoverage();
      await fc.assert(
        fc.asyncProperty(readMethod, read.path(), queryString(read.query()), credentials(key), extraHeaders, anyBody, async (method, path, query, auth, extra, body) => {
          const headers: [string, string][] = [...auth, ...extra];
          if (body) headers.push(['Content-Type', body[0]]);
          await safe({ method, target: path + query, headers, body: body ? Buffer.from(body[1], 'utf8') : undefined });
        }),
        { numRuns: RUNS },
      );
      expectBothSides();
      expect(await fingerprint(t.database.db)).toEqual(before);
    });
  }

  it('each free-text list parameter alone, with any text at all (controls, NUL, lone surrogates, long runs)', { timeout: TIMEOUT }, async () => {
    const TEXT_KEYS = ['cursor', 'status', 'sort', 'country', 'category', 'tags', 'q', 'fields'];
    const pair = fc.constantFrom(...TEXT_KEYS).chain((k) => fc.tuple(fc.constant(k), fc.oneof(hostileText, withControlChar(fc.constantFrom(...LIST[k]!, 'x'))).map(pct)));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v2/cheeses', '/v2/cheeses/seasonal'), pair, async (path, [k, v]) => {
        await safe({ method: 'GET', target: `${path}?${k}=${v}`, headers: [['X-API-Key', key]] });
      }),
      { numRuns: RUNS },
    );
  });

  it('conditional GETs and CSV negotiation stay well-formed for any If-None-Match and Accept', { timeout: TIMEOUT }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v2/cheeses', `/v2/cheeses/${ids[0]}`, '/v2/store/inventory', '/v2/cheeses/seasonal?month=6'), headerValue, headerValue, async (path, inm, accept) => {
        const auth: [string, string] = ['X-API-Key', key];
        const first = await send(port, { method: 'GET', target: path, headers: [auth] });
        const etag = first?.headers.etag ?? '"none"';
        for (const value of [inm, `${etag}, ${inm}`, `W/${etag}`]) {
          const req: RawRequest = { method: 'GET', target: path, headers: [auth, ['If-None-Match', value], ['Accept', accept]] };
          await safe(req);
        }
      }),
      { numRuns: 40 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Below the routes: bytes the HTTP parser itself must refuse, still answered in the Error shape.

const oddByte = fc.integer({ min: 0, max: 255 }).filter((b) => b !== 10 && b !== 13).map((b) => String.fromCharCode(b));
const rawBytes = fc.array(oddByte, { minLength: 1, maxLength: 8 }).map((a) => a.join(''));
const protocolTarget = fc.oneof(
  fc.constantFrom('/v2/cheeses', '/v2/cheeses/1', '/v2/store/inventory', '/v2/cheeses/bulk', '/v2/api-keys'),
  fc.tuple(fc.constantFrom('/v2/cheeses', '/v2/cheeses/1', '/v2/cheeses/seasonal', '/v2/store/inventory', '/v2/api-keys'), fc.constantFrom('/', '?q=', '?tags='), fc.oneof(rawBytes, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).map(utf8))).map(([p, sep, b]) => p + sep + b),
  fc.constantFrom('*', 'http://evil.example/v2/cheeses', 'http://127.0.0.1/v2/store/inventory', 'example.com:443', '', '//v2//cheeses', '/v2/cheeses#x', '/v2/./cheeses', '/v2/cheeses/..', 'v2/cheeses', '/%', '/\\v2', `/v2/cheeses/${'a'.repeat(20_000)}`),
);
const protocolHeader = fc.oneof(
  fc.tuple(fc.constantFrom('X-Odd', 'Accept', 'X-API-Key', 'Authorization', 'Content-Type', 'X-Confirm-Delete'), rawBytes),
  fc.tuple(fc.constantFrom('X A', 'X:A', 'Bad\u0000Name', '', 'ü', '(x)', 'X-Folded'), fc.constantFrom('a', 'a\r\n b', '')),
  fc.tuple(fc.constant('Content-Length'), fc.constantFrom('-1', 'abc', '5, 6', '99999999999999999999', '0x10', '+2', '1 2', '0', ' 3 ')),
  fc.tuple(fc.constant('Transfer-Encoding'), fc.constantFrom('chunked', 'gzip', 'chunked, chunked', 'identity', 'xchunked', 'gzip, chunked')),
  fc.tuple(fc.constantFrom('Expect', 'Upgrade', 'Host', 'TE', 'Trailer'), fc.constantFrom('100-continue', 'fromage', 'websocket', 'h2c', '', 'trailers')),
  fc.tuple(fc.constant('X-Big'), fc.constantFrom(9_000, 17_000, 70_000).map((n) => 'b'.repeat(n))),
);

describe('fuzz: the HTTP layer', () => {
  it('raw request lines, odd header bytes, bad framing: < 500 and an Error body whenever there is an answer', { timeout: TIMEOUT }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GET', 'POST') }, { weight: 3, arbitrary: fc.constantFrom('get', 'G\u0000T', 'FOO', 'PRI', 'CONNECT', 'TRACE', 'OPTIONS', 'HEAD', 'M-SEARCH', 'ÄÖ', 'GET GET') }),
        protocolTarget,
        fc.oneof({ weight: 6, arbitrary: fc.constant('HTTP/1.1') }, { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'HTTP/0.9', 'HTTP/1.1x', 'http/1.1', 'HTTP/11', '') }),
        fc.array(protocolHeader, { maxLength: 3 }),
        credentials(key),
        fc.oneof(hostileText, fc.constantFrom('0\r\n\r\n', 'zz\r\nabc\r\n0\r\n\r\n', '3\r\nabc\r\n0\r\n\r\n', '3;x=y\r\nabc\r\n0\r\nX: y\r\n\r\n')),
        async (method, target, version, odd, auth, bodyText) => {
          const req: RawRequest = { method, target, version, headers: [...auth, ...odd], body: Buffer.from(`${bodyText}${' '.repeat(16)}`, 'utf8') };
          // The server may hang up on garbage (CONNECT, a half-sent body); it must never answer 5xx.
          assertSafe(req, await send(port, req, 1500), { allowNoResponse: true });
        },
      ),
      { numRuns: 150 },
    );
  });
});
