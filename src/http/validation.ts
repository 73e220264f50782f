import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { ErrorSchema, ID_OR_SLUG_PATTERN } from './common.schema.js';
import { COUNTRY_CODE_FORMAT, COUNTRY_CODE_MESSAGE, isCountryCodeText } from '../kernel/countries.js';
import { isDateText, isInstantText } from '../kernel/instants.js';
import { InvalidRequestError, ValidationFailedError, type FieldError } from '../kernel/errors.js';
import type { RequestHook } from '../kernel/request-stage.js';
import { lazyValidator } from './lazy-compile.js';

const base: Options = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false };
/** Raw Ajv errors kept for one 422: a 1 MB body of unknown fields must not answer megabytes. */
const MAX_BODY_ERRORS = 500;

/** A body's rules no schema states (one field against another): the fields they refuse, from a body of any shape. */
export type BodyRules = (body: unknown) => FieldError[];
const bodyRules = new WeakMap<object, BodyRules>();

/**
 * Rules a module checks itself (on a valid body, in its service) that are also named with the
 * schema's errors when the body's schema refuses it, for a field the schema did not name: one
 * 422 names every bad field. Set before the routes taking `schema` are compiled.
 */
export function addBodyRules(schema: object, rules: BodyRules): void {
  bodyRules.set(schema, rules);
}

/** Errors of BodyRules in Ajv's shape, after the schema's and only for fields it left alone. */
function ruleErrors(rules: BodyRules | undefined, data: unknown, schemaErrors: ErrorObject[]): ErrorObject[] {
  if (!rules) return [];
  const named = new Set(schemaErrors.map((e) => (e.keyword === 'required' ? `${e.instancePath}/${String(e.params.missingProperty)}` : e.instancePath)));
  return rules(data)
    .map((problem) => ({ instancePath: `/${problem.field.split('.').join('/')}`, schemaPath: '#', keyword: 'rule', params: {}, message: problem.message }))
    .filter((e) => !named.has(e.instancePath));
}

/**
 * A body is judged whole (`allErrors`): one 422 names every field the schema refuses, a
 * quantity of 0 with an unknown country, at most MAX_BODY_ERRORS of them, then what the
 * body's rules (addBodyRules) refuse. An unknown country says so, rather than `must match
 * format "country-code"`.
 */
function everyProblem(validate: ValidateFunction, rules?: BodyRules): { (data: unknown): boolean; errors?: ErrorObject[] | null } {
  const checked = (data: unknown): boolean => {
    const valid = validate(data);
    const errors = valid ? [] : (validate.errors ?? []).slice(0, MAX_BODY_ERRORS);
    checked.errors = valid
      ? null
      : [...errors, ...ruleErrors(rules, data, errors)].map((e) => (e.keyword === 'format' && e.params.format === COUNTRY_CODE_FORMAT ? { ...e, message: COUNTRY_CODE_MESSAGE } : e));
    return valid;
  };
  checked.errors = null as ErrorObject[] | null;
  return checked;
}

/**
 * Bodies are validated as sent (no coercion: `"5"` is not a number); path, query and
 * headers arrive as text and are coerced. TypeBox schemas stay the single source.
 */
function ajvOf(options: Options): Ajv {
  const ajv = addFormats.default(new Ajv({ ...base, ...options }));
  ajv.addSchema(ErrorSchema).addFormat(COUNTRY_CODE_FORMAT, { type: 'string', validate: isCountryCodeText });
  // Replacing ajv-formats' own: they admit a leap second, year 0000 and offsets past 9999,
  // which no database here stores (kernel/instants.ts). Every `date-time`/`date` parameter and
  // field, query or body, is checked by these.
  ajv.addFormat('date-time', { type: 'string', validate: isInstantText }).addFormat('date', { type: 'string', validate: isDateText });
  return ajv;
}
// multipleOf within 1e-10 of a whole multiple: 0.35 / 0.05 is 6.999999999999999 in floating point.
const BODY_OPTIONS: Options = { allErrors: true, multipleOfPrecision: 10, coerceTypes: false };

let formAjv: Ajv | undefined;
const formChecks = new WeakMap<object, ValidateFunction>();
/**
 * A value checked against a body schema of the API as a /v2 body is (the same Ajv options and
 * formats): the raw errors, for fieldErrors (error-handler.ts). The dashboard's forms, read into
 * the API's shape, are judged by the owning module's schema through here, not by rules of their own.
 */
export function schemaErrors(schema: object, value: unknown): ErrorObject[] {
  formAjv ??= ajvOf(BODY_OPTIONS);
  let validate = formChecks.get(schema);
  if (!validate) formChecks.set(schema, (validate = formAjv.compile(schema)));
  return validate(value) ? [] : [...(validate.errors ?? [])];
}

export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = ajvOf(BODY_OPTIONS);
  const paramAjv = ajvOf({ coerceTypes: 'array' });
  const compile: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
    lazyValidator(() => (httpPart === 'body' ? everyProblem(bodyAjv.compile(schema as object), bodyRules.get(schema as object)) : paramAjv.compile(schema as object)));
  app.setValidatorCompiler(compile);
  // Fastify gives a plugin that calls addSchema its default Ajv back (coercing bodies, dropping
  // unknown fields, no country-code format): every route is compiled with these instead.
  app.addHook('onRoute', (route) => {
    route.validatorCompiler ??= compile;
  });
}

/**
 * The request checks schemas cannot make, in one stage (every stage on every request costs a
 * dispatch): text that cannot be stored, non-canonical numbers, unknown and repeated query
 * parameters. A pipeline stage (pipeline.ts).
 */
export const requestChecks: RequestHook = (request, _reply, next) => {
  try {
    rejectUnstorableText(request);
    rejectNonCanonicalNumbers(request);
    rejectUnknownQueryParameters(request);
    rejectRepeatedSingleValues(request);
    next();
  } catch (error) {
    next(error as Error);
  }
};

interface QueryPropertySchema {
  type?: string;
  anyOf?: { type?: string }[];
}

/**
 * A parameter that takes one value, sent twice (`limit=5&limit=50`, `in_stock=true&in_stock=false`),
 * is a 400 that says so; validation would only say "must be integer". List parameters
 * (`status`, `tags`) may repeat.
 */
function rejectRepeatedSingleValues(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown> | undefined;
  const properties = (request.routeOptions.schema as { querystring?: { properties?: Record<string, QueryPropertySchema> } } | undefined)?.querystring?.properties;
  if (!query || !properties) return;
  const takesList = (schema: QueryPropertySchema) => schema.type === 'array' || (schema.anyOf ?? []).some((s) => s.type === 'array');
  // The names are the request's: only the schema's own properties count (`constructor` is none).
  const repeated = Object.keys(query).filter((name) => Array.isArray(query[name]) && Object.hasOwn(properties, name) && !takesList(properties[name]!));
  if (repeated.length === 0) return;
  throw new InvalidRequestError(`Query parameter${repeated.length > 1 ? 's' : ''} given more than once: ${repeated.join(', ')}; send each once.`, repeated.map((field) => ({ field, message: 'is given more than once' })));
}

/**
 * A query parameter the operation does not define is a 400 naming it, never silently
 * ignored: `?status[]=sold` or a misspelt `?contry=fr` would otherwise return every cheese.
 */
function rejectUnknownQueryParameters(request: FastifyRequest): void {
  if (!request.routeOptions.url?.startsWith('/v2')) return;
  const query = request.query as Record<string, unknown> | undefined;
  if (!query) return;
  const known = (request.routeOptions.schema as { querystring?: { properties?: Record<string, unknown> } } | undefined)?.querystring?.properties ?? {};
  const unknown = Object.keys(query).filter((name) => !Object.hasOwn(known, name));
  if (unknown.length === 0) return;
  const names = unknown.map((name) => name.slice(0, 50));
  throw new InvalidRequestError(`Unknown query parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}.`, names.map((field) => ({ field, message: 'is not a known query parameter' })));
}

const CANONICAL_INTEGER = /^(?:0|-?[1-9][0-9]*)$/;
const CANONICAL_NUMBER = /^(?!-0(?:\.0+)?$)-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

interface PropertySchema {
  type?: string | string[];
  pattern?: string;
  anyOf?: PropertySchema[];
  oneOf?: PropertySchema[];
  items?: PropertySchema;
}

/** How Ajv will read a text value of this schema: as a number (and which), as an id or slug, or as text. */
type Reading = 'integer' | 'number' | 'id' | undefined;

function readingOf(schema: PropertySchema | undefined): Reading {
  if (!schema) return undefined;
  if (schema.type === 'integer' || schema.type === 'number') return schema.type;
  if (schema.pattern === ID_OR_SLUG_PATTERN) return 'id';
  // A union with a numeric member: Ajv coerces any text that Number() reads (`0x3`, ` 3`) into it.
  const members = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(Array.isArray(schema.type) ? schema.type.map((type) => ({ type })) : [])];
  const readings = members.map(readingOf);
  if (readings.includes('number')) return 'number';
  if (readings.includes('integer')) return 'integer';
  return undefined;
}

function nonCanonical(value: string, reading: Reading): string | null {
  switch (reading) {
    case 'integer':
      if (!CANONICAL_INTEGER.test(value)) return 'must be a plain decimal integer';
      return Number.isSafeInteger(Number(value)) ? null : 'must be between -9007199254740991 and 9007199254740991';
    case 'number':
      return CANONICAL_NUMBER.test(value) ? null : 'must be a plain decimal number';
    case 'id':
      return /^[0-9]+$/.test(value) && !CANONICAL_INTEGER.test(value) ? 'must be a plain decimal integer' : null;
    default:
      return null;
  }
}

/**
 * Path and query numbers arrive as text and Ajv coerces them with JavaScript's Number():
 * `0x3`, `1e0`, ` 3`, `+3`, `-0` and `03` all became 3 (or 0), so `/api-keys/0x3` revoked key 3.
 * Only the canonical decimal form is a number here (400 otherwise), checked before coercion,
 * for every integer or number parameter (alone, in a union, or repeated), and for every
 * id-or-slug parameter whose value is all digits (`/cheeses/03` is not cheese 3). Integers
 * beyond 2^53 - 1 are refused too: Number() would round them to another id.
 */
function rejectNonCanonicalNumbers(request: FastifyRequest): void {
  const schema = request.routeOptions.schema as { params?: { properties?: Record<string, PropertySchema> }; querystring?: { properties?: Record<string, PropertySchema> } } | undefined;
  for (const [part, values, properties] of [
    ['path parameter', request.params, schema?.params?.properties],
    ['query parameter', request.query, schema?.querystring?.properties],
  ] as const) {
    if (!properties || typeof values !== 'object' || values === null) continue;
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      const repeated = Array.isArray(value);
      const own = Object.hasOwn(properties, name) ? properties[name] : undefined;
      const member = repeated ? (own?.items ?? own) : own;
      const reading = readingOf(member);
      if (reading === undefined) continue;
      // In a union with text, only what Ajv would turn into a number (Number() reads it) counts.
      const union = member?.type !== reading && reading !== 'id';
      for (const text of repeated ? value : [value]) {
        if (typeof text !== 'string' || (union && (text === '' || Number.isNaN(Number(text))))) continue;
        const problem = nonCanonical(text, reading);
        if (problem) {
          const how = problem.startsWith('must be a plain') ? ' (no "+", exponent, hex, spaces or leading zeros)' : '';
          throw new InvalidRequestError(`Invalid ${part}: ${name} ${problem}${how}.`, [{ field: name, message: problem }]);
        }
      }
    }
  }
}

const UNSTORABLE = 'must not contain U+0000 or unpaired surrogates';

/**
 * Text neither database stores faithfully: PostgreSQL refuses U+0000 (failing the whole
 * statement), and the dialects store a lone surrogate differently. Refused on both, so the
 * same input gets the same answer everywhere.
 */
export function isUnstorable(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed();
}

/** Path (`tags.0.name`) of the first unstorable string or key; iterative, so any depth is fine. */
function unstorablePath(root: unknown): string | null {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string' && isUnstorable(value)) return path;
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (isUnstorable(key)) return childPath;
      stack.push([child, childPath]);
    }
  }
  return null;
}

/** Checked before validation, so nothing is ever written with such text. */
function rejectUnstorableText(request: FastifyRequest): void {
  const inQuery = unstorablePath(request.query);
  if (inQuery !== null) {
    throw new InvalidRequestError(`Invalid query parameter: ${inQuery || 'querystring'} ${UNSTORABLE}.`, [{ field: inQuery || 'querystring', message: UNSTORABLE }]);
  }
  const inBody = unstorablePath(request.body);
  if (inBody !== null) throw ValidationFailedError.field(inBody || 'body', UNSTORABLE);
}
