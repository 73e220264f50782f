import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { compareDocuments, judge, majorOf } from '../../scripts/openapi-breaking/document-diff.js';

type Json = Record<string, any>;

/** A small released document: one list, one creation, one webhook, shared schemas by $ref. */
function released(): Json {
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '2.4.0' },
    security: [{ api_key: [] }],
    components: {
      schemas: {
        Cheese: {
          type: 'object',
          required: ['id', 'name', 'status'],
          properties: {
            id: { type: 'integer' },
            name: { type: 'string' },
            status: { enum: ['available', 'sold_out'] },
            notes: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          },
        },
        CheeseInput: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, status: { enum: ['available', 'sold_out'] }, origin: { type: 'string' } },
        },
      },
      parameters: { IdempotencyKey: { in: 'header', name: 'Idempotency-Key', required: false, schema: { type: 'string' } } },
    },
    paths: {
      '/cheeses': {
        get: {
          parameters: [{ in: 'query', name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 100 } }],
          responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Cheese' } } } } } },
        },
        post: {
          security: [{ api_key: [] }, { oauth: ['write:cheeses'] }],
          parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CheeseInput' } } } },
          responses: {
            201: { description: 'created', headers: { Location: { required: true, schema: { type: 'string' } } }, content: { 'application/json': { schema: { $ref: '#/components/schemas/Cheese' } } } },
            422: { description: 'bad', content: { 'application/json': { schema: { type: 'object' } } } },
          },
        },
      },
      '/cheeses/{id}': {
        get: { security: [], parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Cheese' } } } }, 404: { description: 'no' } } },
      },
    },
    webhooks: {
      'cheese.created': { post: { requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['id', 'data'], properties: { id: { type: 'string' }, data: { $ref: '#/components/schemas/Cheese' } } } } } }, responses: { 200: { description: 'ok' } } } },
    },
  };
}

/** The rules that fired, breaking ones only, for one change made to a copy of the released document. */
function breakingAfter(change: (document: Json) => void): string[] {
  const after = structuredClone(released());
  change(after);
  return compareDocuments(released(), after).filter((c) => c.breaking).map((c) => `${c.rule} @ ${c.where}`);
}

describe('the breaking-change checker (scripts/openapi-breaking)', () => {
  it('finds nothing between a document and itself', () => {
    expect(compareDocuments(released(), released())).toEqual([]);
  });

  it.each<[string, (d: Json) => void, string]>([
    ['a removed operation', (d) => delete d.paths['/cheeses/{id}'].get, 'operation-removed @ GET /cheeses/{id}'],
    ['a removed success status', (d) => (d.paths['/cheeses'].post.responses = { 200: d.paths['/cheeses'].post.responses[201] }), 'response-status-removed @ POST /cheeses 201'],
    ['a new required query parameter', (d) => d.paths['/cheeses'].get.parameters.push({ in: 'query', name: 'origin', required: true, schema: { type: 'string' } }), 'parameter-required @ GET /cheeses query origin'],
    ['an optional parameter made required', (d) => (d.components.parameters.IdempotencyKey.required = true), 'parameter-required @ POST /cheeses header idempotency-key'],
    ['a removed query parameter (unknown ones are refused)', (d) => (d.paths['/cheeses'].get.parameters = []), 'parameter-removed @ GET /cheeses query limit'],
    ['a new required body property', (d) => d.components.schemas.CheeseInput.required.push('origin'), 'request-property-required @ POST /cheeses body.origin'],
    ['a removed property of a closed request object', (d) => delete d.components.schemas.CheeseInput.properties.origin, 'request-property-removed @ POST /cheeses body.origin'],
    ['a narrowed request enum', (d) => (d.components.schemas.CheeseInput.properties.status.enum = ['available']), 'request-enum-narrowed @ POST /cheeses body.status'],
    ['a tightened request bound', (d) => (d.components.schemas.CheeseInput.properties.name.maxLength = 50), 'request-bound-tightened @ POST /cheeses body.name'],
    ['a new request pattern', (d) => (d.components.schemas.CheeseInput.properties.name.pattern = '^[a-z]+$'), 'request-pattern-changed @ POST /cheeses body.name'],
    ['a tightened parameter bound', (d) => (d.paths['/cheeses'].get.parameters[0].schema.maximum = 50), 'request-bound-tightened @ GET /cheeses query limit'],
    ['a request type change', (d) => (d.components.schemas.CheeseInput.properties.origin = { type: 'integer' }), 'request-type-changed @ POST /cheeses body.origin'],
    ['a removed response property', (d) => delete d.components.schemas.Cheese.properties.name, 'response-property-removed @ GET /cheeses 200 body[].name'],
    ['a response property no longer required', (d) => (d.components.schemas.Cheese.required = ['id', 'status']), 'response-property-optional @ GET /cheeses 200 body[].name'],
    ['a response type change', (d) => (d.components.schemas.Cheese.properties.id = { type: 'string' }), 'response-type-changed @ GET /cheeses 200 body[].id'],
    ['a response property that may now be null', (d) => (d.components.schemas.Cheese.properties.name = { anyOf: [{ type: 'string' }, { type: 'null' }] }), 'response-type-widened @ GET /cheeses 200 body[].name'],
    ['a removed success media type', (d) => (d.paths['/cheeses/{id}'].get.responses[200].content = { 'text/csv': { schema: { type: 'string' } } }), 'response-media-removed @ GET /cheeses/{id} 200'],
    ['a removed required response header', (d) => delete d.paths['/cheeses'].post.responses[201].headers.Location, 'response-header-removed @ POST /cheeses 201 Location'],
    ['a public operation that now needs a credential', (d) => delete d.paths['/cheeses/{id}'].get.security, 'security-added @ GET /cheeses/{id}'],
    ['a credential no longer accepted', (d) => (d.paths['/cheeses'].post.security = [{ api_key: [] }]), 'security-alternative-removed @ POST /cheeses'],
    ['a scope added to a credential', (d) => (d.paths['/cheeses'].post.security = [{ api_key: [] }, { oauth: ['write:cheeses', 'admin'] }]), 'security-alternative-removed @ POST /cheeses'],
    ['a webhook no longer sent', (d) => delete d.webhooks['cheese.created'], 'webhook-removed @ webhook cheese.created'],
    ['a property removed from a webhook payload', (d) => delete d.webhooks['cheese.created'].post.requestBody.content['application/json'].schema.properties.id, 'response-property-removed @ webhook cheese.created body.id'],
    ['a body made required where there was none', (d) => (d.paths['/cheeses/{id}'].get.requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } }), 'request-body-required @ GET /cheeses/{id}'],
  ])('flags %s', (_name, change, expected) => {
    expect(breakingAfter(change)).toEqual([expected]);
  });

  it.each<[string, (d: Json) => void]>([
    ['a new operation', (d) => (d.paths['/tags'] = { get: { responses: { 200: { description: 'ok' } } } })],
    ['a new optional parameter', (d) => d.paths['/cheeses'].get.parameters.push({ in: 'query', name: 'origin', schema: { type: 'string' } })],
    ['a new optional body property', (d) => (d.components.schemas.CheeseInput.properties.region = { type: 'string' })],
    ['a widened request enum', (d) => d.components.schemas.CheeseInput.properties.status.enum.push('seasonal')],
    ['a loosened request bound', (d) => (d.components.schemas.CheeseInput.properties.name.maxLength = 200)],
    ['a new response property', (d) => (d.components.schemas.Cheese.properties.region = { type: 'string' })],
    ['a response that is no longer null', (d) => (d.components.schemas.Cheese.properties.notes = { type: 'string' })],
    ['a narrowed response enum', (d) => (d.components.schemas.Cheese.properties.status.enum = ['available'])],
    ['a new value in a response enum (a note, not a break)', (d) => d.components.schemas.Cheese.properties.status.enum.push('seasonal')],
    ['a removed error status', (d) => delete d.paths['/cheeses/{id}'].get.responses[404]],
    ['a new error status', (d) => (d.paths['/cheeses/{id}'].get.responses[429] = { description: 'slow down' })],
    [
      'a renamed path parameter',
      (d) => {
        d.paths['/cheeses/{cheeseId}'] = d.paths['/cheeses/{id}'];
        delete d.paths['/cheeses/{id}'];
      },
    ],
    ['a schema moved to components behind a $ref', (d) => (d.paths['/cheeses'].get.responses[200].content['application/json'].schema.items = structuredClone(d.components.schemas.Cheese))],
    ['an operation that now also accepts another credential', (d) => d.paths['/cheeses'].post.security.push({ bearer: [] })],
    ['a new webhook', (d) => (d.webhooks['cheese.deleted'] = structuredClone(d.webhooks['cheese.created']))],
  ])('accepts %s', (_name, change) => {
    expect(breakingAfter(change)).toEqual([]);
  });

  it('notes a new response enum value without calling it breaking', () => {
    const after = released();
    after.components.schemas.Cheese.properties.status.enum.push('seasonal');
    // A shared schema is compared once, and its changes reported where it is first met.
    expect(compareDocuments(released(), after)).toEqual([expect.objectContaining({ rule: 'response-enum-value-added', breaking: false, where: 'GET /cheeses 200 body[].status' })]);
  });

  it('compares each place a schema was inline with the shared schema that replaced it', () => {
    const object = (names: string[]) => ({ type: 'object', required: names, properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])) });
    const answer = (schema: object) => ({ get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } } } });
    const before = { openapi: '3.1.0', info: { version: '1.0.0' }, paths: { '/a': answer(object(['id', 'b'])), '/c': answer(object(['id', 'c'])) } };
    const shared = { $ref: '#/components/schemas/Thing' };
    const after = { ...before, components: { schemas: { Thing: object(['id', 'b']) } }, paths: { '/a': answer(shared), '/c': answer(shared) } };
    expect(compareDocuments(before, after).map((c) => `${c.rule} @ ${c.where}`)).toEqual(['response-property-removed @ GET /c 200 body.c']);
  });

  it('allows breaking changes only with a new major version', () => {
    const after = released();
    delete after.paths['/cheeses/{id}'];
    expect(judge(released(), after)).toMatchObject({ ok: false, majorMoved: false });
    after.info.version = '2.5.0';
    expect(judge(released(), after)).toMatchObject({ ok: false, majorMoved: false });
    after.info.version = '3.0.0';
    expect(judge(released(), after)).toMatchObject({ ok: true, majorMoved: true, breaking: [expect.objectContaining({ rule: 'operation-removed' })] });
    expect(majorOf('v12.0.1')).toBe(12);
  });

  it('fails the npm script (exit 1) on a breaking change and passes on an additive one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-breaking-'));
    const base = path.join(dir, 'base.json');
    const broken = path.join(dir, 'broken.json');
    const grown = path.join(dir, 'grown.json');
    fs.writeFileSync(base, JSON.stringify(released()));
    const after = released();
    delete after.components.schemas.Cheese.properties.name;
    fs.writeFileSync(broken, JSON.stringify(after));
    const added = released();
    added.components.schemas.Cheese.properties.region = { type: 'string' };
    fs.writeFileSync(grown, JSON.stringify(added));
    const run = (target: string) => promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/openapi-breaking.ts', '--base', base, '--target', target]);
    await expect(run(broken)).rejects.toMatchObject({ code: 1, stdout: expect.stringContaining('BREAKING response-property-removed: GET /cheeses 200 body[].name') });
    await expect(run(grown)).resolves.toMatchObject({ stdout: expect.stringContaining('no breaking change') });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
