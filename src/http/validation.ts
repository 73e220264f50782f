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
  app.addHook('preValidation', rejectNulCharacters);
}

/** Path (`tags.0.name`) of the first string or key holding U+0000; iterative, so any depth is fine. */
function nulPath(root: unknown): string | null {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string' && value.includes('\u0000')) return path;
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return childPath;
      stack.push([child, childPath]);
    }
  }
  return null;
}

/**
 * PostgreSQL text cannot hold U+0000 (it fails the whole statement), so no query parameter or
 * body may carry it, on either database. Checked before anything is written.
 */
async function rejectNulCharacters(request: FastifyRequest): Promise<void> {
  const inQuery = nulPath(request.query);
  if (inQuery !== null) {
    throw new InvalidRequestError(`Invalid query parameter: ${inQuery || 'querystring'} contains U+0000.`, [{ field: inQuery || 'querystring', message: 'must not contain U+0000' }]);
  }
  const inBody = nulPath(request.body);
  if (inBody !== null) throw ValidationFailedError.field(inBody || 'body', 'must not contain U+0000');
}
