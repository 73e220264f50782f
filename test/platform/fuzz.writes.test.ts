import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { INPUT_ALIASES } from '../../src/modules/catalogue/cheese.input.js';
import { MILKS, STATUSES, TEXTURES } from '../../src/modules/catalogue/cheese.model.js';
import { SCOPES, type Role, type Scope } from '../../src/kernel/scopes.js';
import { ERROR_TYPES } from '../../src/kernel/errors.js';
import { credentials, credentialTemplates, extraHeaders, hostileText, jsonBodies, pathSegment, queryString, utf8, withControlChar, withKey, wrongValue, type BodySpec } from './fuzz.arbitraries.js';
import { assertSafe, describeRequest, expectBothSides, fingerprint, resetCoverage, send, type RawRequest, type RawResponse } from './fuzz.support.js';

// Property-based robustness of every catalogue write and of API-key management: whatever the
// path, query, headers and body, the answer is < 500 in the Error shape, and a rejected write
// (any 4xx, or an atomic bulk batch with a failure) leaves the database exactly as it was.

const RUNS = 100;
const TIMEOUT = 60_000;

let t: TestApp;
let port: number;
let key: string;
let ids: string[];
let names: string[];
let images: Buffer[];
/** Ids and slugs of cheeses that still exist (earlier properties delete some), refreshed before each. */
let live: string[];

beforeAll(async () => {
  t = await createTestApp({ seed: true });
  port = Number(new URL(t.http.baseUrl).port);
  key = await t.key(['admin']);
  const rows = await t.database.db.selectFrom('cheeses').select(['id', 'slug', 'name']).orderBy('id').limit(30).execute();
  ids = [...rows.map((r) => String(r.id)), ...rows.map((r) => r.slug)];
  names = rows.slice(0, 5).map((r) => r.name);
  const tiny = sharp({ create: { width: 3, height: 2, channels: 3, background: '#ffcc00' } });
  images = await Promise.all([tiny.clone().png().toBuffer(), tiny.clone().jpeg().toBuffer(), tiny.clone().webp().toBuffer()]);
});
afterAll(() => t.close());
beforeEach(async () => {
  resetCoverage();
  const rows = await t.database.db.selectFrom('cheeses').select(['id', 'slug']).orderBy('id').limit(30).execute();
  live = [...rows.map((r) => String(r.id)), ...rows.map((r) => r.slug)];
});

/** Sends, checks the oracle, and for a rejected write checks that nothing changed. */
async function write(req: RawRequest, rejected: (res: RawResponse) => boolean = (res) => res.status >= 400): Promise<RawResponse> {
  const before = await fingerprint(t.database.db);
  const res = await send(port, req);
  assertSafe(req, res);
  if (rejected(res)) {
    const after = await fingerprint(t.database.db);
    if (!isDeepStrictEqual(after, before)) {
      throw new Error(`a rejected write changed the database: ${JSON.stringify(before)} -> ${JSON.stringify(after)}\n  request: ${describeRequest(req)}\n  response: ${res.status} ${res.text.slice(0, 400)}`);
    }
  }
  return res;
}

const withBody = (method: string, target: string, headers: [string, string][], spec: BodySpec): RawRequest => ({
  method,
  target,
  headers: spec.contentType === undefined ? headers : [...headers, ['Content-Type', spec.contentType]],
  body: spec.body === undefined ? undefined : Buffer.from(spec.body, 'latin1'),
});

// --- CheeseInput: valid by construction (cross-field rules included), so that most requests get
// past validation into the service; jsonBodies() then breaks one thing at a time.

const text = (max: number) => fc.oneof({ weight: 8, arbitrary: fc.stringMatching(new RegExp(`^[A-Za-z][A-Za-z0-9 '.-]{0,${Math.min(max, 30) - 1}}$`)) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: Math.min(max, 20) }) }, { weight: 1, arbitrary: hostileText });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
const nullable = <T>(arb: fc.Arbitrary<T>) => maybe(fc.option(arb, { nil: null, freq: 5 }));
const tagName = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,12}$/);
const CHEESE_FIELDS = ['name', 'category', 'photoUrls', 'tags', 'status', 'origin', 'region', 'producer', 'milk', 'pasteurized', 'texture', 'rind', 'agedWeeks', 'ageMonths', 'tastingNotes', 'stinkinessRating', 'servingTempCelsius', 'pairings', 'seasonal', 'availableMonths', 'agingProfile', 'organic', 'pricePerKg', 'stockQuantityKg'];
const FIELDS = [...CHEESE_FIELDS, ...Object.keys(INPUT_ALIASES), 'id', 'slug', 'inStock', 'createdAt', 'updatedAt', 'unknownField', '__proto__'];
const NUMERIC = ['pricePerKg', 'stockQuantityKg', 'agedWeeks', 'ageMonths', 'stinkinessRating', 'price_per_kg', 'stock_quantity_kg'];

const cheeseFields = {
  name: fc.oneof({ weight: 8, arbitrary: text(200) }, { weight: 1, arbitrary: fc.constantFrom('Comté', 'seasonal', '123', 'Brie de Meaux') }),
  category: nullable(fc.oneof(fc.record({ name: fc.oneof(fc.constantFrom('Blue', 'alpine', 'Fuzz'), text(100)) }), fc.record({ id: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 9 }) }, { weight: 1, arbitrary: fc.constantFrom(999_999, 2 ** 53 - 1, 2 ** 53 + 2, 1e19, 1e20) }) }))),
  tags: maybe(fc.array(fc.oneof(fc.record({ name: tagName }), fc.record({ id: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 30 }) }, { weight: 1, arbitrary: fc.constantFrom(999_999, 1e19, 2 ** 63) }) })), { maxLength: 3 })),
  status: maybe(fc.constantFrom(...STATUSES)),
  origin: nullable(fc.oneof(text(100), fc.record({ country: text(100), region: nullable(text(100)), producer: nullable(text(200)) }))),
  milk: nullable(fc.constantFrom(...MILKS)),
  pasteurized: nullable(fc.boolean()),
  texture: nullable(fc.constantFrom(...TEXTURES)),
  rind: nullable(text(60)),
  tastingNotes: nullable(text(2000)),
  stinkinessRating: nullable(fc.integer({ min: 1, max: 10 })),
  servingTempCelsius: nullable(fc.tuple(fc.integer({ min: -5, max: 40 }), fc.integer({ min: -5, max: 40 })).map(([a, b]) => ({ min: Math.min(a, b), max: Math.max(a, b) }))),
  pairings: maybe(fc.array(text(100), { maxLength: 3 })),
  agingProfile: nullable(fc.record({ stages: fc.array(fc.record({ name: text(80), weeks: fc.integer({ min: 0, max: 600 }), temperatureC: fc.double({ min: -5, max: 40, noNaN: true }), humidityPct: fc.double({ min: 0, max: 100, noNaN: true }) }), { maxLength: 2 }) })),
  organic: maybe(fc.boolean()),
  // Mostly whole cents and grams (accepted); sometimes more decimals than that (422, never rounded).
  pricePerKg: nullable(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 10_000_000 }).map((cents) => cents / 100) }, { weight: 1, arbitrary: fc.oneof(fc.double({ min: 0, max: 100_000, noNaN: true }), fc.constantFrom(0.005, 99_999.995)) })),
  stockQuantityKg: maybe(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 1_000_000_000 }).map((grams) => grams / 1000) }, { weight: 1, arbitrary: fc.oneof(fc.double({ min: 0, max: 1_000_000, noNaN: true }), fc.constantFrom(0, 0.0004, 4.9, 5)) })),
  photoUrls: maybe(fc.array(fc.oneof(fc.webUrl(), fc.constant('http://localhost:8080/v2/cheeses/1/images/1')), { maxLength: 2 })),
};
/** Fields whose validity depends on each other: the season, and weeks versus months. */
const coupled = fc.tuple(
  fc.oneof(fc.constant({}), fc.constant({ seasonal: false }), fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 4 }).chain((months) => fc.constantFrom({ seasonal: true, availableMonths: months }, { availableMonths: months }))),
  fc.oneof(fc.constant({}), fc.integer({ min: 0, max: 522 }).chain((w) => fc.constantFrom({ agedWeeks: w }, { agedWeeks: w, ageMonths: Math.floor(w / 4.345) })), fc.integer({ min: 0, max: 120 }).map((m) => ({ ageMonths: m }))),
);
const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
/** Form B spellings: now and then one field in snake_case instead of, or as well as, camelCase. */
const aliased = (record: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(record, fc.constantFrom(...Object.entries(INPUT_ALIASES)), fc.constantFrom('camel', 'camel', 'camel', 'snake', 'snake', 'both')).map(([c, [alias, name], spelling]) => {
    if (spelling === 'camel' || !(name in c)) return c;
    const { [name]: value, ...rest } = c;
    return spelling === 'both' ? { ...c, [alias]: value } : { ...rest, [alias]: value };
  });
const cheeseRecord = (nameRequired: boolean) =>
  aliased(fc.tuple(fc.record(cheeseFields), coupled).map(([c, [season, age]]) => strip({ ...c, ...season, ...age, ...(nameRequired ? {} : { name: c.name.length % 2 ? c.name : undefined }) })));
const cheese = cheeseRecord(true);
const patch = cheeseRecord(false);
const cheeseId = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 40 }) }, { weight: 1, arbitrary: fc.oneof(wrongValue, fc.constantFrom('no-such-cheese', 'Comte', 0, -1, 1e20, 1.5)) });

const alive = () => fc.constantFrom(...live);
/** An operation without query parameters refuses every one (400): mostly none, sometimes hostile ones. */
const noQueryMostly = (spec: Record<string, string[]>) => fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString(spec) });
const admin = () => credentials(key);

/** Runs a property, then checks its generators reached both sides: something accepted, something refused. */
async function fuzz(property: fc.IAsyncPropertyWithHooks<any>): Promise<void> {
  await fc.assert(property, { numRuns: RUNS });
  expectBothSides();
}

describe('fuzz: catalogue writes', () => {
  it('POST /v2/cheeses', { timeout: TIMEOUT }, async () => {
    await fuzz(
      fc.asyncProperty(admin(), extraHeaders, jsonBodies(cheese, FIELDS, NUMERIC), fc.constantFrom('', '', '?name=x', '?__proto__=1'), async (auth, extra, body, query) => {
        await write(withBody('POST', `/v2/cheeses${query}`, [...auth, ...extra], body));
      }),
    );
  });

  it('PUT /v2/cheeses', { timeout: TIMEOUT }, async () => {
    const replacement = fc
      .tuple(cheese, cheeseId, fc.constantFrom(...STATUSES), fc.option(fc.constantFrom(...names), { freq: 6, nil: undefined }))
      .map(([c, id, status, taken]) => ({ ...c, id, status, name: taken ?? c.name }));
    await fuzz(
      fc.asyncProperty(admin(), extraHeaders, jsonBodies(replacement, FIELDS, NUMERIC), async (auth, extra, body) => {
        await write(withBody('PUT', '/v2/cheeses', [...auth, ...extra], body));
      }),
    );
  });

  it('POST /v2/cheeses/{cheeseId} (form update)', { timeout: TIMEOUT }, async () => {
    const query = queryString({ name: ['Renamed', ...names, '  ', 'x'.repeat(201), 'Comté', 'a\u0000b'], status: [...STATUSES, 'gone', 'AVAILABLE'] });
    const body = fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: jsonBodies(patch, FIELDS, NUMERIC) });
    await fuzz(
      fc.asyncProperty(admin(), extraHeaders, fc.oneof({ weight: 2, arbitrary: alive() }, { weight: 1, arbitrary: pathSegment(ids) }), query, body, async (auth, extra, id, q, spec) => {
        const target = `/v2/cheeses/${id}${q}`;
        await write(spec ? withBody('POST', target, [...auth, ...extra], spec) : { method: 'POST', target, headers: [...auth, ...extra] });
      }),
    );
  });

  it('DELETE /v2/cheeses/{cheeseId}', { timeout: TIMEOUT }, async () => {
    const confirm = fc.oneof({ weight: 3, arbitrary: fc.constant<[string, string][]>([['X-Confirm-Delete', 'true']]) }, { weight: 1, arbitrary: fc.constant<[string, string][]>([]) });
    await fuzz(
      fc.asyncProperty(admin(), confirm, extraHeaders, fc.oneof(alive(), pathSegment(ids)), noQueryMostly({ force: ['true'], cheeseId: ids }), async (auth, yes, extra, id, q) => {
        await write({ method: 'DELETE', target: `/v2/cheeses/${id}${q}`, headers: [...auth, ...yes, ...extra] });
      }),
    );
  });

  it('POST /v2/cheeses/bulk: per-operation errors in the Error shape; a failed atomic batch changes nothing', { timeout: TIMEOUT }, async () => {
    const bulkId = fc.oneof({ weight: 3, arbitrary: fc.oneof(cheeseId, alive()) }, { weight: 1, arbitrary: wrongValue });
    const operation = fc.oneof(
      { weight: 3, arbitrary: fc.record({ op: fc.constant('create'), cheese }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant('update'), id: bulkId, cheese: patch }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('delete'), id: bulkId }) },
      { weight: 1, arbitrary: fc.record({ op: fc.oneof(fc.constantFrom('create', 'update', 'delete', 'upsert'), wrongValue), id: wrongValue, cheese: fc.oneof(patch, wrongValue) }, { requiredKeys: [] }) },
    );
    const batch = fc.oneof(
      { weight: 12, arbitrary: fc.record({ atomic: fc.boolean(), operations: fc.array(operation, { minLength: 1, maxLength: 5 }) }) },
      { weight: 1, arbitrary: fc.constantFrom({ operations: [] }, { operations: Array.from({ length: 101 }, () => ({ op: 'delete', id: 1 })) }, { atomic: 'yes', operations: [{ op: 'delete', id: 1 }] }) },
    );
    const rejected = (res: RawResponse) => {
      if (res.status >= 400) return true;
      const out = JSON.parse(res.text);
      for (const r of out.results) {
        if (!(r.status < 500) || (r.error && (r.error.code !== r.status || !(ERROR_TYPES as readonly string[]).includes(r.error.type)))) throw new Error(`bad bulk result ${JSON.stringify(r)}`);
      }
      if (out.succeeded + out.failed !== out.results.length) throw new Error('succeeded + failed != results');
      return out.atomic === true && out.failed > 0;
    };
    await fuzz(
      fc.asyncProperty(admin(), extraHeaders, jsonBodies(batch, ['atomic', 'operations', 'extra'], ['atomic']), async (auth, extra, body) => {
        await write(withBody('POST', '/v2/cheeses/bulk', [...auth, ...extra], body), rejected);
      }),
    );
  });

  it('POST /v2/cheeses/{cheeseId}/uploadImage: random bytes, broken multipart, other content types', { timeout: TIMEOUT }, async () => {
    type Part = { name: string; filename?: string | undefined; type?: string; data: string };
    const image = fc.constantFrom(...images.map((i) => i.toString('latin1')));
    const bytes = fc.oneof(
      { weight: 2, arbitrary: image },
      { weight: 2, arbitrary: fc.tuple(image, fc.nat()).map(([b, n]) => b.slice(0, n % b.length)) },
      { weight: 2, arbitrary: fc.tuple(image, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([b, i, v]) => b.slice(0, i % b.length) + String.fromCharCode(v) + b.slice((i % b.length) + 1)) },
      { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a).toString('latin1')) },
      { weight: 1, arbitrary: fc.constantFrom('GIF89a\x01\x00\x01\x00', '<svg xmlns="http://www.w3.org/2000/svg"/>', '%PDF-1.4', '\x89PNG\r\n\x1a\n', 'RIFF\x00\x00\x00\x00WEBP', '\xff\xd8\xff') },
    );
    const build = (b: string, parts: Part[], shape = 'ok', cut = 0) => {
      const head = (p: Part) => utf8(`--${b}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`);
      let body = `${shape === 'preamble' ? 'junk\r\n' : ''}${parts.map((p) => `${head(p)}${p.data}\r\n`).join('')}${shape === 'unterminated' ? '' : `--${b}--\r\n`}`;
      if (shape === 'cut') body = body.slice(0, cut % (body.length + 1));
      return shape === 'lf' ? body.replaceAll('\r\n', '\n') : body;
    };
    const caption = fc.oneof(text(500), withControlChar(text(500))).map((v): Part => ({ name: 'caption', data: utf8(v) }));
    const primary = fc.constantFrom('true', 'false', '1', '0', '').map((v): Part => ({ name: 'isPrimary', data: v }));
    const fields = fc.tuple(fc.option(caption, { nil: undefined, freq: 4 }), fc.option(primary, { nil: undefined })).map((list) => list.filter((p) => p !== undefined));
    const clean = fc.tuple(image, fields).map(([data, rest]): BodySpec => ({ contentType: 'multipart/form-data; boundary=fuzzBoundary1234', body: build('fuzzBoundary1234', [{ name: 'file', filename: 'cheese.jpg', type: 'image/jpeg', data }, ...rest]) }));
    const file = fc.record({ name: fc.constant('file'), filename: fc.oneof(fc.constantFrom('cheese.jpg', '../../x.png', ''), hostileText.map(utf8)), type: fc.constantFrom('image/jpeg', 'image/png', 'text/plain'), data: bytes });
    const field = fc.record({ name: fc.constantFrom('caption', 'isPrimary'), data: fc.oneof(fc.constantFrom('true', 'yes', 'x'.repeat(2100)), hostileText.map(utf8)) });
    const stray = fc.record({ name: fc.oneof(fc.constantFrom('file2', '__proto__', 'constructor', 'caption', ''), hostileText.map(utf8)), filename: fc.option(fc.constant('a.png'), { nil: undefined }), data: bytes });
    const boundary = fc.oneof({ weight: 4, arbitrary: fc.constant('fuzzBoundary1234') }, { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9'()+_,./:=? -]{0,75}$/) }, { weight: 1, arbitrary: fc.constantFrom('x'.repeat(300), '"q"', '') });
    const type = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('multipart/form-data; boundary=B', 'multipart/form-data; boundary="B"', 'Multipart/Form-Data;boundary=B') },
      { weight: 1, arbitrary: fc.constantFrom('multipart/form-data', 'multipart/form-data; boundary=', 'multipart/mixed; boundary=B', 'application/json', 'application/octet-stream', 'image/png', 'text/plain', '') },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
    const hostile = fc
      .tuple(boundary, fc.array(fc.oneof(file, field, stray).map((p): Part => p), { maxLength: 8 }), fc.constantFrom('ok', 'ok', 'cut', 'unterminated', 'lf', 'preamble'), fc.nat(), type)
      .map(([b, parts, shape, cut, ct]): BodySpec => ({ contentType: ct?.replaceAll('B', b), body: build(b, parts, shape, cut) }));
    await fuzz(
      fc.asyncProperty(admin(), extraHeaders, fc.oneof({ weight: 3, arbitrary: alive() }, { weight: 1, arbitrary: pathSegment(ids) }), fc.oneof(clean, hostile, hostile), async (auth, extra, id, spec) => {
        await write(withBody('POST', `/v2/cheeses/${id}/uploadImage`, [...auth, ...extra], spec));
      }),
    );
  });
});

// --- API keys: a fresh account per run (holding 1 to 3 keys), so creating (at most 3 active, then
// 409) and revoking stay reachable however earlier runs went.

const KEY_OWNERS: [Scope[], Role][] = [[['admin'], 'admin'], [['admin'], 'admin'], [['admin'], 'admin'], [['read:cheeses'], 'admin'], [['read:cheeses', 'write:orders'], 'customer']];
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const dateTime = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.date({ min: new Date('1990-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }), fc.constantFrom('Z', 'z', '+00:00', '+14:00', '-23:59', '+05:30'), fc.constantFrom('T', 't', ' '), fc.boolean())
      .map(([d, zone, sep, ms]) => `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}${sep}${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${ms ? '.123456789' : ''}${zone}`),
  },
  { weight: 2, arbitrary: fc.constantFrom('2030-12-31T23:59:60Z', '2030-06-30T23:59:60+00:00', '9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59Z', '0000-01-01T00:00:00Z', '2030-02-30T00:00:00Z', '2030-01-01', '2030-01-01T24:00:00Z', 'tomorrow', '2099-01-01T00:00:00Z') },
  { weight: 1, arbitrary: hostileText },
);
const keyBody = fc.record({
  name: fc.option(fc.oneof(fc.constant(null), fc.string({ minLength: 1, maxLength: 100 }), hostileText), { nil: undefined }),
  scopes: fc.oneof({ weight: 3, arbitrary: fc.subarray([...SCOPES], { minLength: 1 }) }, { weight: 1, arbitrary: fc.array(fc.oneof(fc.constantFrom(...SCOPES, 'root', '', 'ADMIN', 'read:cheese'), wrongValue), { maxLength: 9 }) }),
  expiresAt: fc.option(fc.oneof(fc.constant(null), dateTime), { nil: undefined, freq: 4 }),
});

describe('fuzz: API keys', () => {
  it('POST /v2/api-keys', { timeout: TIMEOUT }, async () => {
    await fuzz(
      fc.asyncProperty(fc.constantFrom(...KEY_OWNERS), credentialTemplates, extraHeaders, jsonBodies(keyBody, ['name', 'scopes', 'expiresAt', 'key', 'id'], ['name', 'expiresAt']), fc.nat(2), async ([scopes, role], auth, extra, body, more) => {
        const own = await t.key(scopes, role);
        for (let i = 0; i < more; i++) await t.http.post('/v2/api-keys', { headers: { authorization: `Bearer ${own}` }, json: { scopes: ['read:cheeses'] } });
        await write(withBody('POST', '/v2/api-keys', [...withKey(auth, own), ...extra], body));
      }),
    );
  });

  it('DELETE /v2/api-keys/{id}', { timeout: TIMEOUT }, async () => {
    await fuzz(
      fc.asyncProperty(credentialTemplates, extraHeaders, fc.oneof({ weight: 2, arbitrary: fc.constantFrom('OWN', 'OTHER') }, { weight: 3, arbitrary: pathSegment(['1', '2', '3']) }), async (auth, extra, segment) => {
        const own = await t.key(['admin']);
        const [mine, theirs] = await Promise.all([own, key].map((k) => t.database.db.selectFrom('api_keys').select('id').where('key_prefix', '=', k.slice(0, 16)).executeTakeFirstOrThrow()));
        const id = segment === 'OWN' ? String(mine!.id) : segment === 'OTHER' ? String(theirs!.id) : segment;
        await write({ method: 'DELETE', target: `/v2/api-keys/${id}`, headers: [...withKey(auth, own), ...extra] });
      }),
    );
  });
});
