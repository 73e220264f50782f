import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TYPES } from '../../src/kernel/errors.js';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** Error statuses whose body is not the Error: the health probes answer 503 with their report. */
const OWN_ERROR_BODIES = ['GET /health 503', 'GET /health/ready 503'];

const LIMITS = { enabled: true, free: { perHour: 36, burst: 3 }, pro: { perHour: 36_000, burst: 20 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1_000_000 };
let t: TestApp;
let staff: Record<string, string>;
let doc: Json;
beforeAll(async () => {
  // Rate limits on (so their headers are sent), with room for every request of this file.
  ({ t, auth: staff } = await createAdminTestApp({ seed: true, config: { rateLimits: { ...LIMITS, free: { perHour: 1_000_000, burst: 1_000_000 } } } }));
  doc = (await t.http.get('/v2/openapi.json')).body;
});
afterAll(() => t.close());

function operations(): { label: string; path: string; method: string; operation: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ label: `${method.toUpperCase()} ${path}`, path, method, operation: item[method] as Json })),
  );
}

function deref(node: Json): Json {
  let current = node;
  for (let i = 0; typeof current?.$ref === 'string' && i < 10; i++) {
    current = current.$ref.slice(2).split('/').reduce((at: Json, token: string) => at?.[token.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return current;
}

const FORMATS: Record<string, string> = { 'date-time': new Date(Date.now() + 86_400_000).toISOString(), email: 'probe@example.com', uri: 'https://example.com/probe', 'country-code': 'FR' };

/** A value the schema accepts, for the fields it requires: enough to pass validation. */
function exampleOf(node: Json): unknown {
  const schema = deref(node);
  if (schema.examples?.[0] !== undefined) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  if ('const' in schema) return schema.const;
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map(exampleOf));
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return exampleOf(union.find((member: Json) => deref(member).type !== 'null') ?? union[0]);
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name: string) => [name, exampleOf(schema.properties?.[name] ?? {})]));
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => exampleOf(schema.items ?? {}));
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return true;
    case 'string':
      return FORMATS[schema.format] ?? 'probe';
    default:
      return schema.properties ? exampleOf({ ...schema, type: 'object' }) : 'probe';
  }
}

const declaresIdempotencyKey = (operation: Json) => (operation.parameters ?? []).some((p: Json) => p.$ref === '#/components/parameters/IdempotencyKey');

/** Every `$ref` of the document, with where it is. */
function refs(node: unknown, at = '#', found: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) node.forEach((n, i) => refs(n, `${at}/${i}`, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push([at, value]);
      else refs(value, `${at}/${key}`, found);
    }
  }
  return found;
}

describe('the OpenAPI document', () => {
  it('declares its JSON Schema dialect (2020-12) and every media type an operation answers in: the CSV of the catalogue too', async () => {
    expect(doc.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    const csv = await t.http.get('/v2/cheeses?limit=2', { headers: { ...staff, accept: 'text/csv' } });
    expect(csv.status).toBe(200);
    const mediaType = csv.headers.get('content-type')!.split(';')[0]!;
    expect(mediaType).toBe('text/csv');
    expect(Object.keys(doc.paths['/cheeses'].get.responses['200'].content)).toEqual(['application/json', 'text/csv']);
    expect(doc.paths['/cheeses'].get.responses['200'].content['text/csv'].schema.type).toBe('string');
  });

  it('declares Idempotency-Key, by one shared parameter, on exactly the operations that honour it', async () => {
    // An operation that honours the header checks it before doing anything: a malformed key is
    // a 400 naming it. Every other operation ignores the header. Each writing operation is tried
    // with a body its schema accepts and a malformed key.
    // Its own deployment: the probes delete and revoke what they name. A fresh admin key for each.
    const probe = await createTestApp({ seed: true });
    const honouring: string[] = [];
    const declared: string[] = [];
    const answers: string[] = [];
    for (const { label, path, method, operation } of operations()) {
      if (declaresIdempotencyKey(operation)) declared.push(label);
      if (method === 'get' || operation.requestBody?.content?.['multipart/form-data']) continue;
      const url = path.replace(/\{([^}]+)\}/g, (_m, name) => {
        const parameter = (operation.parameters ?? []).map(deref).find((p: Json) => p.in === 'path' && p.name === name);
        return String(name === 'username' ? 'admin' : (parameter?.example ?? exampleOf(parameter?.schema ?? {})));
      });
      const query = (operation.parameters ?? []).map(deref).filter((p: Json) => p.in === 'query' && p.required);
      const search = query.length ? `?${new URLSearchParams(query.map((p: Json) => [p.name, String(exampleOf(p.schema))])).toString()}` : '';
      const body = operation.requestBody ? exampleOf(operation.requestBody.content['application/json'].schema) : undefined;
      const headers = { ...bearer(await probe.key(['admin'])), 'idempotency-key': 'not a key' };
      const answer = await probe.http.request(method.toUpperCase(), `/v2${url}${search}`, { headers, ...(body !== undefined && { json: body }) });
      if (answer.status === 400 && answer.body.errors?.[0]?.field === 'Idempotency-Key') honouring.push(label);
      answers.push(`${label} ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    }
    await probe.close();
    expect(declared.length).toBeGreaterThan(5);
    expect(honouring.sort(), `what each writing operation answered:\n${answers.join('\n')}`).toEqual(declared.sort());
    const parameter = doc.components.parameters.IdempotencyKey;
    expect(parameter).toMatchObject({ in: 'header', name: 'Idempotency-Key', required: false });
    const inline = operations().filter(({ operation }) => (operation.parameters ?? []).some((p: Json) => p.name?.toLowerCase() === 'idempotency-key'));
    expect(inline.map((o) => o.label)).toEqual([]);
  }, 120_000);

  it('replays a request that honours the key, with the Idempotent-Replayed header it declares', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Declared replay', pricePerKg: 20, stockQuantityKg: 10 } })).body;
    const customer = bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
    const order = { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } };
    const first = await t.http.post('/v2/orders', { headers: { ...customer, 'idempotency-key': 'declared-1' }, json: order });
    const again = await t.http.post('/v2/orders', { headers: { ...customer, 'idempotency-key': 'declared-1' }, json: order });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await t.http.get('/v2/orders', { headers: customer })).body.items).toHaveLength(1);
    const createOrder = doc.paths['/orders'].post;
    expect(declaresIdempotencyKey(createOrder)).toBe(true);
    expect(createOrder.responses['201'].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/IdempotentReplayed' });
  });

  it('declares every rate-limit header a real response carries, and each declared on those responses is sent', async () => {
    // A second deployment with a Free burst of 3, so that a customer meets its 429.
    const small = await createAdminTestApp({ config: { rateLimits: LIMITS } });
    const customer = { 'x-api-key': await small.t.key(['read:cheeses'], 'customer') };
    const samples: [TestApp, string, string, string, Record<string, string>, unknown?][] = [
      [t, 'GET', '/cheeses', '/v2/cheeses?limit=1', staff],
      [t, 'GET', '/cheeses/{cheeseId}', '/v2/cheeses/no-such-cheese', staff],
      [t, 'GET', '/orders', '/v2/orders', { authorization: 'Bearer sk_test_not_a_key' }],
      [t, 'GET', '/orders', '/v2/orders?limit=0', staff],
      [t, 'POST', '/orders', '/v2/orders', staff, { items: [] }],
      [t, 'GET', '/health', '/v2/health', {}],
      ...Array.from({ length: 4 }, () => [small.t, 'GET', '/cheeses', '/v2/cheeses?limit=1', customer] as [TestApp, string, string, string, Record<string, string>]),
    ];
    const NAMES = ['ratelimit-policy', 'ratelimit', 'retry-after', 'idempotent-replayed'];
    const seen = new Set<number>();
    try {
      for (const [app, method, path, url, headers, json] of samples) {
        const answer = await app.http.request(method, url, { headers, ...(json !== undefined && { json }) });
        seen.add(answer.status);
        const response = doc.paths[path][method.toLowerCase()].responses[String(answer.status)];
        expect(response, `${method} ${url} answered ${answer.status}, which is not documented`).toBeDefined();
        const declared = Object.keys(response.headers ?? {}).map((name) => name.toLowerCase());
        const sent = NAMES.filter((name) => answer.headers.get(name) !== null);
        expect(sent.filter((name) => !declared.includes(name)), `${method} ${url} ${answer.status}: sent, not declared`).toEqual([]);
        expect(declared.filter((name) => NAMES.includes(name) && name !== 'idempotent-replayed' && !sent.includes(name)), `${method} ${url} ${answer.status}: declared, not sent`).toEqual([]);
      }
    } finally {
      await small.t.close();
    }
    expect([...seen].sort()).toEqual([200, 400, 401, 404, 422, 429]);
    expect(doc.components.headers.RetryAfter.required).toBe(true);
  });

  it('answers every error in the one Error schema, whose type is the closed enum; a 422 in its ValidationError variant', async () => {
    const wrong: string[] = [];
    for (const { label, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        if (!/^[45]/.test(status) || OWN_ERROR_BODIES.includes(`${label} ${status}`)) continue;
        const expected = { 'application/json': { schema: { $ref: `#/components/schemas/${status === '422' ? 'ValidationError' : 'Error'}` } } };
        if (!isDeepStrictEqual(response.content, expected)) wrong.push(`${label} ${status}`);
      }
      if (!operation.responses['503']) wrong.push(`${label}: no 503`);
    }
    expect(wrong).toEqual([]);
    const { Error: error, ValidationError: validation } = doc.components.schemas;
    expect(error.properties.type.enum).toEqual([...ERROR_TYPES]);
    expect(error.required).toEqual(['code', 'type', 'message']);
    expect(validation.allOf[0]).toEqual({ $ref: '#/components/schemas/Error' });
    expect(validation.allOf[1]).toMatchObject({ required: ['type', 'errors'], properties: { type: { enum: ['validation_failed'] } } });
    // Errors are JSON whatever the operation offers on success: an image that is not there.
    const missing = await t.http.get('/v2/cheeses/1/images/999999', { headers: { accept: 'image/png' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
    expect(missing.body).toMatchObject({ code: 404, type: 'not_found' });
    const invalid = await t.http.post('/v2/cheeses', { headers: staff, json: { name: '' } });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({ type: 'validation_failed', errors: expect.arrayContaining([{ field: 'name', message: expect.any(String) }]) });
  });

  it('defines each shared schema once: no inline copy of a components schema, no dangling reference', () => {
    const components = Object.entries(doc.components.schemas as Record<string, Json>);
    const copies: string[] = [];
    const visit = (node: unknown, at: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${at}/${i}`));
      if (!node || typeof node !== 'object') return;
      // Two different schemas with one $id are left inline, marked, by the generator.
      if ('x-fromagerie-schema' in node) copies.push(`${at} is a second schema named ${String(node['x-fromagerie-schema'])}`);
      if (!/^#\/components\/schemas\/[^/]+$/.test(at)) {
        for (const [name, schema] of components) if (isDeepStrictEqual(node, schema)) copies.push(`${at} copies ${name}`);
      }
      for (const [key, value] of Object.entries(node)) visit(value, `${at}/${key}`);
    };
    visit(doc, '#');
    expect(copies).toEqual([]);
    const dangling = refs(doc).filter(([, ref]) => deref({ $ref: ref }) === undefined);
    expect(dangling).toEqual([]);
    for (const name of ['Cheese', 'Order', 'Error', 'ValidationError', 'FieldError']) expect(doc.components.schemas[name], name).toBeDefined();
    expect(doc.paths['/orders'].post.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Order' });
  });
});
