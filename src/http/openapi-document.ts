import { isDeepStrictEqual } from 'node:util';

/**
 * The last pass over the generated OpenAPI document (@fastify/swagger's `transformObject`):
 * what the route declarations state once for many operations is written once here, under
 * `components`, and referenced. Every rule is derived from what the routes already declare,
 * so the document cannot drift from the behaviour:
 *
 * - `Idempotency-Key`: the header parameter the idempotency module adds to each operation
 *   that honours it (`config.idempotent`) becomes one `components.parameters` entry.
 * - Rate limits: an operation that can answer 429 is rate-limited (the limits module adds
 *   the 429 to exactly those), so each of its responses declares `RateLimit-Policy` and
 *   `RateLimit`, its 429 `Retry-After`. Every 503 in the Error shape declares `Retry-After`
 *   (every ServiceUnavailableError carries it); any operation may meet one, so each lists it.
 * - Errors: every 4xx/5xx response whose body is the Error schema is `application/json`
 *   whatever the operation's success media types (errors are always JSON), and a 422 is the
 *   `ValidationError` variant of Error (`errors` always present).
 * - Schemas with an `$id` that a route uses at the top of a body or response (`Order`) are
 *   emitted once under `components.schemas` and referenced (@fastify/swagger inlines them).
 */

const SCHEMAS = '#/components/schemas/';
/** Set by the route transform (openapi.ts) on a top-level body or response schema with an `$id`. */
export const SCHEMA_NAME_MARK = 'x-fromagerie-schema';

export const IDEMPOTENCY_KEY_REF = '#/components/parameters/IdempotencyKey';
export const HEADER_REFS = {
  'RateLimit-Policy': '#/components/headers/RateLimitPolicy',
  RateLimit: '#/components/headers/RateLimit',
  'Retry-After': '#/components/headers/RetryAfter',
  'Idempotent-Replayed': '#/components/headers/IdempotentReplayed',
} as const;

const HEADERS = {
  RateLimitPolicy: {
    description:
      'The rate limits that apply to this caller (draft-ietf-httpapi-ratelimit-headers): one item per limit, `"name";q=quota;w=window seconds`, e.g. `"free";q=100;w=3600, "per-minute";q=1000;w=60`.',
    schema: { type: 'string', examples: ['"free";q=100;w=3600, "per-minute";q=1000;w=60'] },
  },
  RateLimit: {
    description: 'What is left of the tightest limit (draft-ietf-httpapi-ratelimit-headers): `"name";r=requests remaining;t=seconds until it is full again`, e.g. `"free";r=9;t=324`.',
    schema: { type: 'string', examples: ['"free";r=9;t=324'] },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying (RFC 9110 §10.2.3): a whole number, at least 1.',
    required: true,
    schema: { type: 'integer', minimum: 1, examples: [30] },
  },
  IdempotentReplayed: {
    description: '`true` when this answer is the replay of an earlier request with the same `Idempotency-Key`: nothing was done again.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** 503 with the Error body: any operation may meet it (decisions.md "Errors and HTTP"). */
const UNAVAILABLE = {
  description: 'The service cannot answer now (its database does not answer, or this client has too many open connections): nothing changed; retry after `Retry-After` seconds.',
  content: { 'application/json': { schema: { $ref: `${SCHEMAS}Error` } } },
};

type Json = Record<string, unknown>;
type Operation = { parameters?: Json[]; responses?: Record<string, Json>; [key: string]: unknown };

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function operationsOf(document: Json): Operation[] {
  const paths = (document.paths ?? {}) as Record<string, Json>;
  return Object.values(paths).flatMap((item) => Object.entries(item).filter(([method]) => METHODS.has(method)).map(([, operation]) => operation as Operation));
}

export function refineDocument<T extends object>(document: T): T {
  const doc = document as unknown as Json;
  const components = (doc.components ??= {}) as Json;
  const schemas = (components.schemas ??= {}) as Record<string, Json>;
  hoistNamedSchemas(doc, schemas);
  addErrorVariants(schemas);
  const operations = operationsOf(doc);
  const idempotencyKey = hoistIdempotencyKey(operations);
  components.parameters = { ...(components.parameters as Json), ...(idempotencyKey && { IdempotencyKey: idempotencyKey }) };
  components.headers = { ...(components.headers as Json), ...HEADERS };
  for (const operation of operations) {
    const responses = (operation.responses ??= {});
    if (!responses['503']) responses['503'] = structuredClone(UNAVAILABLE);
    for (const [status, response] of Object.entries(responses)) {
      if (/^[45]/.test(status)) normaliseError(status, response);
    }
    declareHeaders(operation, responses);
  }
  return document;
}

/** Replaces each marked schema by a reference to its one copy under `components.schemas`. */
function hoistNamedSchemas(document: Json, schemas: Record<string, Json>): void {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    for (const [key, value] of Object.entries(node)) node[key] = visit(value);
    const name = node[SCHEMA_NAME_MARK];
    if (typeof name !== 'string') return node;
    const existing = schemas[name];
    // Two different schemas under one name: left inline and marked, for test/openapi to report (never a failing document).
    if (existing !== undefined && !isDeepStrictEqual(stripAnnotations(existing), stripAnnotations(node))) return node;
    delete node[SCHEMA_NAME_MARK];
    schemas[name] ??= node;
    return { $ref: `${SCHEMAS}${name}` };
  };
  document.paths = visit(document.paths);
}

/** `examples` may be moved to the media type by the generator: not part of the schema's identity, nor is the mark. */
function stripAnnotations(schema: Json): Json {
  const { examples: _examples, example: _example, [SCHEMA_NAME_MARK]: _mark, ...rest } = schema;
  return rest;
}

/** `FieldError` (one entry of `errors`) and `ValidationError` (a 422: Error with `errors`). */
function addErrorVariants(schemas: Record<string, Json>): void {
  const error = schemas.Error as { properties: { errors: { items: Json } } } | undefined;
  if (!error) return;
  if (!schemas.FieldError) {
    schemas.FieldError = { ...error.properties.errors.items, description: 'One problem with one field: a body property (dotted path), a parameter or a header.' };
    error.properties.errors.items = { $ref: `${SCHEMAS}FieldError` };
  }
  schemas.ValidationError = {
    description: 'The Error of a 422: `type` is `validation_failed` and `errors` lists each field.',
    allOf: [
      { $ref: `${SCHEMAS}Error` },
      {
        type: 'object',
        required: ['type', 'errors'],
        properties: { type: { type: 'string', enum: ['validation_failed'] }, errors: { type: 'array', minItems: 1, items: { $ref: `${SCHEMAS}FieldError` } } },
      },
    ],
  };
}

/**
 * The first declaration becomes the component; one that differs from it stays inline, for
 * test/openapi to report (the idempotency module's documenter is the one place to declare it).
 */
function hoistIdempotencyKey(operations: Operation[]): Json | undefined {
  let shared: Json | undefined;
  for (const operation of operations) {
    const parameters = operation.parameters ?? [];
    const index = parameters.findIndex((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key');
    if (index < 0) continue;
    shared ??= parameters[index];
    if (isDeepStrictEqual(shared, parameters[index])) parameters[index] = { $ref: IDEMPOTENCY_KEY_REF };
  }
  return shared;
}

function normaliseError(status: string, response: Json): void {
  const content = response.content as Record<string, { schema?: Json }> | undefined;
  if (!content) return;
  const bodies = Object.values(content);
  // Another body (the health report's 503) is the operation's own statement: left as it is.
  if (bodies.length === 0 || !bodies.every((media) => media.schema?.$ref === `${SCHEMAS}Error`)) return;
  response.content = { 'application/json': { schema: { $ref: `${SCHEMAS}${status === '422' ? 'ValidationError' : 'Error'}` } } };
}

function isErrorBody(response: Json): boolean {
  const media = (response.content as Record<string, { schema?: Json }> | undefined)?.['application/json'];
  return media?.schema?.$ref === `${SCHEMAS}Error`;
}

function declareHeaders(operation: Operation, responses: Record<string, Json>): void {
  const rateLimited = responses['429'] !== undefined;
  const idempotent = (operation.parameters ?? []).some((p) => p.$ref === IDEMPOTENCY_KEY_REF);
  for (const [status, response] of Object.entries(responses)) {
    const headers: Record<string, Json> = { ...(response.headers as Record<string, Json>) };
    if (rateLimited) {
      headers['RateLimit-Policy'] = { $ref: HEADER_REFS['RateLimit-Policy'] };
      headers.RateLimit = { $ref: HEADER_REFS.RateLimit };
    }
    if ((status === '429' || status === '503') && isErrorBody(response)) headers['Retry-After'] = { $ref: HEADER_REFS['Retry-After'] };
    if (idempotent && /^2/.test(status)) headers['Idempotent-Replayed'] = { $ref: HEADER_REFS['Idempotent-Replayed'] };
    if (Object.keys(headers).length > 0) response.headers = headers;
  }
}
