import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ErrorSchema } from './common.schema.js';

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
}
