import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorSchema } from './common.schema.js';
import { InvalidRequestError, ValidationFailedError } from './errors.js';

const base: Options = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false };

/**
 * Bodies are validated as sent (no coercion: `"5"` is not a number); path, query and
 * headers arrive as text and are coerced. TypeBox schemas stay the single source.
 */
export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = addFormats.default(new Ajv({ ...base, coerceTypes: false }));
  const paramAjv = addFormats.default(new Ajv({ ...base, coerceTypes: 'array' }));
  for (const ajv of [bodyAjv, paramAjv]) ajv.addSchema(ErrorSchema);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema));
  app.addHook('preValidation', rejectUnstorableText);
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
async function rejectUnstorableText(request: FastifyRequest): Promise<void> {
  const inQuery = unstorablePath(request.query);
  if (inQuery !== null) {
    throw new InvalidRequestError(`Invalid query parameter: ${inQuery || 'querystring'} ${UNSTORABLE}.`, [{ field: inQuery || 'querystring', message: UNSTORABLE }]);
  }
  const inBody = unstorablePath(request.body);
  if (inBody !== null) throw ValidationFailedError.field(inBody || 'body', UNSTORABLE);
}
