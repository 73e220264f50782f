import fc from 'fast-check';

/**
 * fast-check generators shared by fuzz.reads.test.ts and fuzz.writes.test.ts: hostile text,
 * path segments, query strings, credentials, headers and JSON bodies. Each mixes plausible
 * values (so requests get past validation into the services) with hostile ones.
 */

/** Percent-encodes the UTF-8 of any string (lone surrogates included), keeping unreserved characters. */
export const pct = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
/** The UTF-8 bytes of a string as a byte (latin1) string: for BodySpec.body, or raw into a request line. */
export const utf8 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

const HOSTILE_WORDS = [
  '', ' ', 'null', 'undefined', 'true', 'false', 'TRUE', '1', '0', '-0', '-1', '1.5', '1e3', '1e309', '-1e309', 'NaN', 'Infinity', '0x1F', '1_000', '+1', '٣', '𝟏',
  '9223372036854775807', '9223372036854775808', '-9223372036854775809', '18446744073709551616', '9007199254740993', '999999999999999', '9999999999999999',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '../../etc/passwd', '..\\..\\win.ini', "' OR 1=1 --", '"; DROP TABLE cheeses; --',
  '%', '%zz', '%00', '\u0000', 'a\u0000b', '\u0007', '\ud800', '\udfff\ud800', '\u202e', '\ufeff', '\u2028', 'e\u0301', 'ﬁ', 'İ', 'ß', '🧀', '👩‍👩‍👧', '{{7*7}}', '${7*7}',
  '<script>alert(1)</script>', 'a,b,,c', ',,,', ' , ', 'available', 'available,sold', 'pending', 'sold', 'blue', 'cow', 'raw-milk', 'pdo', 'France', 'france', 'Comté',
  'name', '-name', '--name', 'createdAt', '-updated_at', 'price_per_kg', 'pricePerKg', 'agedWeeks', 'asc', 'desc', 'id,name', 'id,,nope', 'comte saint-nectaire',
  '2030-12-31T23:59:60Z', '9999-12-31T23:59:59-23:59', '0000-01-01T00:00:00Z', 'x'.repeat(101), 'x'.repeat(201), 'x'.repeat(501), 'x'.repeat(1001),
];

/** Characters text columns, JSON and terminals choke on: NUL, C0/C1 controls, DEL, lone surrogates, non-characters. */
export const controlChar = fc.oneof({ weight: 3, arbitrary: fc.constant('\u0000') }, { weight: 4, arbitrary: fc.constantFrom('\u0001', '\u001b', '\u007f', '\u0085', '\ud800', '\udfff', '\ufffe', '\uffff') });
const insertAt = (s: string, c: string, at: number) => s.slice(0, at % (s.length + 1)) + c + s.slice(at % (s.length + 1));
/** The same strings with a control character slipped in somewhere. */
export const withControlChar = (text: fc.Arbitrary<string>) => fc.tuple(text, controlChar, fc.nat()).map(([s, c, at]) => insertAt(s, c, at));

/** Copy of `value` with a control character inserted into its n-th string leaf (if it has one). */
function taint(value: unknown, n: number, c: string): unknown {
  const leaves: string[][] = [];
  const walk = (v: unknown, path: string[]) => {
    if (typeof v === 'string') leaves.push(path);
    else if (v && typeof v === 'object') for (const [k, child] of Object.entries(v)) walk(child, [...path, k]);
  };
  walk(value, []);
  const target = leaves[n % (leaves.length || 1)];
  if (!target) return value;
  const copy = structuredClone(value) as Record<string, unknown>;
  let node: any = copy;
  for (const k of target.slice(0, -1)) node = node[k];
  const last = target.at(-1)!;
  node[last] = insertAt(node[last], c, n);
  return copy;
}

/** Text from every corner: printable ASCII, any Unicode (lone surrogates too), words that confuse parsers, long runs. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_WORDS) },
  { weight: 2, arbitrary: withControlChar(fc.string({ maxLength: 12 })) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.oneof(fc.bigInt(), fc.double(), fc.integer()).map(String) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', 'é', '%', ',', '9'), fc.integer({ min: 100, max: 2500 })).map(([c, n]) => c.repeat(n)) },
);

/** Printable ASCII only: what any HTTP client can put in a header value. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  hostileText.map((s) => s.replace(/[^\x20-\x7e]/g, '')),
  fc.integer({ min: 200, max: 3000 }).map((n) => 'v'.repeat(n)),
);

const SEGMENT_WORDS = [
  '%zz', '%00', '%', '%%', '%2', '%E0%A4%A', '%C0%AF', '%c0%ae%c0%ae', '%2e%2e', '%2e%2e%2f', '..', '.', '../', '../../etc/passwd', '..%2f..%2f', '%2F', '%5C', '\\',
  '%0d%0a', '%0A', '%u0041', '%FF%FE', '%ED%A0%80', '%F0%9F%A7%80', ';', ';a=b', '?', '??', '#', '*', '@', ':id', '{cheeseId}', '%20', '+', '~', '!', "'", '"', '<x>',
  '`', '|', '^', '{}', '[]', '-', '--', 'seasonal', 'bulk', 'findByStatus', 'FINDBYTAGS', 'uploadImage', 'a'.repeat(120), 'a'.repeat(121), 'a'.repeat(500), 'a'.repeat(501),
];

/** A path parameter: real ids and slugs, numbers of every shape, bad encodings, traversal, long and raw bytes. */
export function pathSegment(realIds: string[]): fc.Arbitrary<string> {
  const one = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...realIds) },
    { weight: 3, arbitrary: fc.constantFrom(...SEGMENT_WORDS) },
    { weight: 2, arbitrary: hostileText.map(pct) },
    { weight: 1, arbitrary: fc.oneof(fc.bigInt(), fc.double(), fc.integer({ min: -10, max: 400 })).map(String) },
    { weight: 1, arbitrary: fc.constantFrom(1000, 5000, 12_000).map((n) => 'a'.repeat(n)) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }).map(utf8) },
  );
  return fc.oneof({ weight: 6, arbitrary: one }, { weight: 1, arbitrary: fc.array(one, { minLength: 2, maxLength: 3 }).map((p) => p.join('/')) });
}

/**
 * A query string over the operation's own keys (each mostly with a plausible value, else a
 * hostile one) plus hostile keys; repeated keys, `[]` arrays, bad percent-encodings.
 */
export function queryString(spec: Record<string, string[]>): fc.Arbitrary<string> {
  const keys = Object.keys(spec);
  const known = fc.constantFrom(...keys).chain((k) =>
    fc.tuple(fc.constant(k), fc.oneof({ weight: 4, arbitrary: spec[k]?.length ? fc.constantFrom(...spec[k]) : hostileText }, { weight: 2, arbitrary: hostileText })),
  );
  const badValue = fc.constantFrom('%zz', '%', '%0', '%00', '%E0%A4%A', '%C0%AF', '%FF', '%ED%A0%80', '+', '%2B', '%26', '%3D', '=', '&', '[]', '"x"');
  const pair = fc.oneof(
    { weight: 8, arbitrary: known.map(([k, v]) => `${k}=${pct(v)}`) },
    { weight: 1, arbitrary: known.map(([k, v]) => `${k}[]=${pct(v)}`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...keys), badValue).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: fc.constantFrom(...keys) },
    { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'a[b]', '', '__proto__[x]'), hostileText.map(pct)), hostileText).map(([k, v]) => `${k}=${pct(v)}`) },
  );
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 12, arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join('&')}`) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s) => `?${s.replace(/[ #]/g, '')}`) },
  );
}

/**
 * Who is asking, as templates over the key (`KEY`, `KEY-1` for all but its last character):
 * mostly the key as a bearer token, else nothing, X-API-Key, garbage, or two credentials.
 */
export const credentialTemplates: fc.Arbitrary<[string, string][]> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<[string, string][]>([['Authorization', 'Bearer KEY']]) },
  { weight: 1, arbitrary: fc.constant<[string, string][]>([]) },
  { weight: 1, arbitrary: fc.constant<[string, string][]>([['X-API-Key', 'KEY']]) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'bearer   KEY  ', 'Bearer KEYx', 'Bearer KEY-1', `Bearer sk_live_${'a'.repeat(43)}`, `Bearer sk_test_${'A'.repeat(43)}`, 'Bearer', 'Bearer ', 'Bearer KEY KEY', 'Bearer\tKEY', 'Bearer sk_',
        `Basic ${Buffer.from('admin:test-staff-password').toString('base64')}`, 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.',
      )
      .map((v): [string, string][] => [['Authorization', v]]),
  },
  { weight: 1, arbitrary: headerValue.map((v): [string, string][] => [[v.length % 2 ? 'Authorization' : 'X-API-Key', v]]) },
  { weight: 1, arbitrary: fc.constantFrom<[string, string][]>([['Authorization', 'Bearer KEY'], ['X-API-Key', 'KEY']], [['X-API-Key', 'KEY'], ['X-API-Key', 'KEY']]) },
);

export const withKey = (template: [string, string][], key: string): [string, string][] =>
  template.map(([name, value]) => [name, value.replaceAll('KEY-1', key.slice(0, -1)).replaceAll('KEY', key)]);

export const credentials = (key: string) => credentialTemplates.map((template) => withKey(template, key));

const headerName = fc
  .stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,24}$/)
  .filter((n) => !/^(content-length|transfer-encoding|host|connection|expect|upgrade|te|trailer|keep-alive)$/i.test(n));

/** Headers the operations read (Accept, If-None-Match, X-Confirm-Delete, X-Request-Id) and random ones. */
export const extraHeaders: fc.Arbitrary<[string, string][]> = fc.array(
  fc.oneof(
    fc.tuple(fc.constant('Accept'), fc.oneof(fc.constantFrom('text/csv', 'application/json', '*/*', 'text/csv, application/json', 'application/json;q=0, text/csv', 'text/*', 'image/png', 'application/xml', ''), headerValue)),
    fc.tuple(fc.constant('If-None-Match'), fc.oneof(fc.constantFrom('*', '"x"', 'W/"x"', '""', ',,,', '*, "a"', 'W/'), headerValue)),
    fc.tuple(fc.constant('X-Confirm-Delete'), fc.oneof(fc.constantFrom('true', 'TRUE', ' true ', 'false', '', '1', 'yes', 'true, true'), headerValue)),
    fc.tuple(fc.constant('X-Request-Id'), headerValue),
    fc.tuple(headerName, headerValue),
  ),
  { maxLength: 4 },
);

/** What to send as the body: its bytes as a latin1 string (readable in counterexamples) and the declared Content-Type (undefined: none). */
export interface BodySpec {
  contentType: string | undefined;
  body: string | undefined;
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8', 'application/json; charset=utf-16', 'application/json;charset=latin1', 'APPLICATION/JSON', 'application/json;', 'application/jsonx',
  'application/vnd.api+json', 'application/problem+json', 'text/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=x',
  'application/xml', '*/*', 'application/octet-stream', 'image/png', '', ';', 'json',
];

/** Any Content-Type: mostly JSON, else its lookalikes, other types, none, or noise. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 30, arbitrary: fc.constant('application/json') },
  { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: headerValue },
);

const WRONG_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, -1e308, 5e-324, '', ' ', 'x', '\u0000', [], {}, [null], [[]], { id: 1 }, ['x'], 'true', '1', 'x'.repeat(3000)];
/** A value of (very probably) the wrong type for any field. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...WRONG_VALUES),
  fc.jsonValue({ maxDepth: 2 }),
  hostileText,
  fc.oneof(fc.double(), fc.integer(), fc.constantFrom(2 ** 53 + 2, 1e20, -(2 ** 63))),
);

const BROKEN_JSON = [
  '{', '}', '[', ']', 'NaN', 'undefined', "{'name':'x'}", '{"name":"x",}', '{"name":"x"}}', '\ufeff{"name":"x"}', '{"name":"x"} trailing', '{"name":"\\x"}',
  '{"name":"\\ud800"}', '{"name":"\\u0000"}', '{"name":"x","name":"y"}', 'null', 'true', '0', '""', '[]', '{}', '"{}"', '1e400', '{"name":1e400}', '{"name":"x"\u0000}',
  '{"__proto__":{"isAdmin":true},"name":"x"}', '{"constructor":{"prototype":{"isAdmin":true}},"name":"x"}', '{"name":"x","__proto__":null}', '{"name":"x","constructor":1}',
];
const NUMBER_LITERALS = ['1e400', '-1e400', '-0', '1.0', '1e-400', '123456789012345678901234567890', '0.1e1', '1E2', '-1', '9007199254740993', '0.30000000000000004'];

/**
 * Hostile bodies for a JSON operation, around `valid` (mostly-acceptable payloads): one field
 * of the wrong type, snake_case and camelCase both, prototype keys, deep nesting, huge strings,
 * broken JSON, raw number literals, random bytes, random JSON; each under a random Content-Type.
 */
export function jsonBodies(valid: fc.Arbitrary<Record<string, unknown>>, fields: string[], numericFields: string[]): fc.Arbitrary<BodySpec> {
  const json = (v: unknown) => utf8(JSON.stringify(v) ?? '');
  const splice = (v: Record<string, unknown>, text: string) => utf8(JSON.stringify(v).replace(/^\{/, `{${text}${Object.keys(v).length ? ',' : ''}`));
  const body = fc.oneof(
    { weight: 16, arbitrary: valid.map(json) },
    { weight: 6, arbitrary: fc.tuple(valid, fc.constantFrom(...fields), wrongValue).map(([v, f, w]) => json({ ...v, [f]: w })) },
    { weight: 5, arbitrary: fc.tuple(valid, fc.nat(), controlChar).map(([v, n, c]) => json(taint(v, n, c))) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...fields), fc.constantFrom(...fields)).map(([v, a, b]) => json({ ...v, [a]: v[b] ?? 1, [b]: v[a] ?? 1 })) },
    { weight: 2, arbitrary: fc.tuple(valid, fc.constantFrom('"__proto__":{"isAdmin":true}', '"constructor":{"prototype":{"x":1}}', '"__proto__":[]', '"prototype":1')).map(([v, t]) => splice(v, t)) },
    { weight: 2, arbitrary: fc.tuple(valid, fc.constantFrom(...numericFields), fc.constantFrom(...NUMBER_LITERALS)).map(([v, f, n]) => splice(v, `${JSON.stringify(f)}:${n}`)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...fields), fc.integer({ min: 50, max: 20_000 }), fc.boolean()).map(([f, n, arr]) => `{"name":"deep","${f}":${arr ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n)}}`) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...fields), fc.constantFrom(250, 2100, 100_000, 1_100_000)).map(([v, f, n]) => json({ ...v, [f]: 'é'.repeat(n) })) },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...BROKEN_JSON), fc.string({ maxLength: 30 }), fc.tuple(valid, fc.nat()).map(([v, n]) => JSON.stringify(v).slice(0, n % (JSON.stringify(v).length || 1)))).map(utf8) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a).toString('latin1')) },
    { weight: 2, arbitrary: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.anything({ maxDepth: 3, withNullPrototype: true })).map(json) },
    { weight: 1, arbitrary: fc.constant('') },
  );
  return fc.tuple(contentType, fc.option(body, { freq: 12, nil: undefined })).map(([type, b]) => ({ contentType: type, body: b }));
}
