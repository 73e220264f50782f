import Type from 'typebox';
import { ERROR_TYPES } from '../kernel/errors.js';

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
  { $id: 'Error', description: 'Every error body, for every status (docs/decisions/http.md, "Errors").' },
);

const errorRef = Type.Unsafe({ $ref: 'Error#' });

/** Standard error responses, referenced by every route's schema. */
export function errorResponses(...statuses: number[]): Record<number, unknown> {
  const descriptions: Record<number, string> = {
    400: 'Invalid path or query parameter (a percent-escape that is not UTF-8, a number not in plain decimal, a date-time that is not an instant between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, a leap second `:60` included), named in `errors`; or a body that is not valid JSON or not UTF-8.',
    401: 'Credential missing, invalid, expired, revoked, or of the wrong environment.',
    403: 'Credential valid but lacking the scope or ownership.',
    404: 'Not found.',
    406: 'None of the representations this operation offers is acceptable (Accept).',
    408: 'The request did not arrive within the time allowed.',
    409: 'Conflict with the current state.',
    412: 'A precondition (If-Match, If-Unmodified-Since, If-None-Match) does not hold on the current representation: nothing changed.',
    413: 'The body is over the size limit; when `Content-Length` says so, answered before the body is read (and the connection closed).',
    415: 'The body is not in a media type this operation takes, declares a charset other than UTF-8, or comes in a content or transfer coding (send it uncompressed).',
    422: 'The body failed validation; `errors` lists each field.',
    503: 'Too busy for this now: retry after `Retry-After` seconds.',
  };
  return Object.fromEntries(statuses.map((s) => [s, { ...errorRef, description: descriptions[s] ?? 'Error.' }]));
}

/**
 * An id or a slug in a path. Slugs are never all digits, so all digits is an id, and an id is
 * written in plain decimal: `03` is a 400 (validation.ts), never cheese 3.
 */
export const ID_OR_SLUG_PATTERN = '^(?:0|[1-9][0-9]{0,119}|(?![0-9]+$)[A-Za-z0-9-]{1,120})$';

export const IdParam = Type.String({
  pattern: ID_OR_SLUG_PATTERN,
  description: 'The integer id or the slug (e.g. `42` or `comte-24-mois`). An id is plain decimal: leading zeros (`042`) are a 400.',
  examples: ['42', 'comte-24-mois'],
});
