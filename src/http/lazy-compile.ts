import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaValidationError, FastifyServerOptions } from 'fastify';

interface Checker {
  (data: unknown): boolean;
  errors?: FastifySchemaValidationError[] | null;
}

/**
 * A route's validator, compiled on its first request instead of at start: Ajv compiling
 * every schema of every route took about 190 ms of a 1.4 s start (a CPU profile of
 * `node dist/server.js`), most of it for routes an instance may never serve. Fastify reads
 * `errors` off the function it called, so the compiled one's errors are copied across.
 */
export function lazyValidator(compile: () => Checker): Checker {
  let compiled: Checker | undefined;
  const validate: Checker = (data) => {
    compiled ??= compile();
    const result = compiled(data);
    validate.errors = compiled.errors;
    return result;
  };
  validate.errors = null;
  return validate;
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = (data: unknown) => string;

/**
 * Fastify's own serializer compiler (fast-json-stringify, with the schemas added by
 * addSchema), each response schema compiled on its first use: another 170 ms of the start.
 */
export const lazySerializers: NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']> = {
  buildSerializer: ((externalSchemas: unknown, options: unknown) => {
    const compileFor = (SerializerSelector() as SerializerFactory)(externalSchemas as never, options as never);
    return (routeSchema: Parameters<ReturnType<SerializerFactory>>[0]) => {
      let serialize: Serializer | undefined;
      return (data: unknown) => (serialize ??= compileFor(routeSchema) as Serializer)(data);
    };
  }) as never,
};
