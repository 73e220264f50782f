import Type from 'typebox';
import { ERROR_TYPES } from './errors.js';

export const ErrorSchema = Type.Object(
  {
    code: Type.Integer({ format: 'int32', description: 'The HTTP status code.', examples: [404] }),
    type: Type.Enum([...ERROR_TYPES], { description: 'One of a closed list; switch on this, not on `message`.' }),
    message: Type.String({ description: 'Human-readable; may change between releases.', examples: ['Cheese 42 not found.'] }),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'Per-field problems; always present on 422, sometimes on 400.',
      }),
    ),
  },
  { $id: 'Error', description: 'Every error body, for every status (decisions.md §9).' },
);

const errorRef = Type.Unsafe({ $ref: 'Error#' });

/** Standard error responses, referenced by every route's schema. */
export function errorResponses(...statuses: number[]): Record<number, unknown> {
  const descriptions: Record<number, string> = {
    400: 'Invalid path or query parameter, or malformed JSON.',
    401: 'Credential missing, invalid, expired, revoked, or of the wrong environment.',
    403: 'Credential valid but lacking the scope or ownership.',
    404: 'Not found.',
    409: 'Conflict with the current state.',
    413: 'Payload too large.',
    415: 'Unsupported media type.',
    422: 'The body failed validation; `errors` lists each field.',
  };
  return Object.fromEntries(statuses.map((s) => [s, { ...errorRef, description: descriptions[s] ?? 'Error.' }]));
}

export const IdParam = Type.String({
  pattern: '^[A-Za-z0-9-]{1,120}$',
  description: 'The integer id or the slug (e.g. `42` or `comte-24-mois`).',
  examples: ['42', 'comte-24-mois'],
});
