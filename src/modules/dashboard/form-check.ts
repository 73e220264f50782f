import { fieldErrors } from '../../http/error-handler.js';
import { schemaErrors } from '../../http/validation.js';
import { ValidationFailedError, type FieldError } from '../../kernel/errors.js';

/**
 * A form read into the shape of its /v2 body, judged by the owning module's TypeBox schema (the
 * same Ajv and messages as the API): one contract per operation, no rule restated here.
 */
export function problemsOf(schema: object, value: unknown): FieldError[] {
  return fieldErrors(schemaErrors(schema, value) as Parameters<typeof fieldErrors>[0], 'body');
}

/** Throws the 422 page of the problems the module's schema finds, if any. */
export function checkForm(schema: object, value: unknown): void {
  const problems = problemsOf(schema, value);
  if (problems.length > 0) throw new ValidationFailedError('The form is invalid:', problems);
}
