import type { components } from './generated/openapi.js';

/** The closed list of error kinds the API answers with (the OpenAPI `Error` schema's `type`). */
export type ErrorType = components['schemas']['Error']['type'];
export type FieldError = NonNullable<components['schemas']['Error']['errors']>[number];

const ERROR_TYPES: ReadonlySet<string> = new Set<ErrorType>([
  'invalid_request', 'validation_failed', 'unauthorized', 'forbidden', 'not_found', 'method_not_allowed',
  'precondition_failed', 'conflict', 'failed_dependency', 'payload_too_large', 'unsupported_media_type',
  'not_acceptable', 'rate_limited', 'internal', 'service_unavailable',
]);

/**
 * An answer that is not in the Error shape (a proxy's HTML 502, say) still gets a `type`, from
 * its status, so a `switch` on `type` covers every FromagerieError.
 */
function typeOfStatus(status: number): ErrorType {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 413) return 'payload_too_large';
  if (status === 422) return 'validation_failed';
  if (status === 429) return 'rate_limited';
  if (status === 502 || status === 503 || status === 504) return 'service_unavailable';
  if (status >= 500) return 'internal';
  return 'invalid_request';
}

/** The API answered with an error status (4xx or 5xx, after any retries). */
export class FromagerieError extends Error {
  override readonly name = 'FromagerieError';
  readonly status: number;
  readonly type: ErrorType;
  /** The `X-Request-Id` of the answer: quote it when asking for help. */
  readonly requestId: string | null;
  /** Per-field problems (always on 422, sometimes on 400); empty otherwise. */
  readonly errors: FieldError[];
  readonly headers: Headers;

  constructor(response: Response, body: unknown) {
    const shaped = isErrorBody(body) ? body : null;
    super(shaped?.message ?? `The API answered ${response.status} ${response.statusText}`.trim());
    this.status = response.status;
    this.type = shaped && ERROR_TYPES.has(shaped.type) ? (shaped.type as ErrorType) : typeOfStatus(response.status);
    this.requestId = response.headers.get('x-request-id');
    this.errors = shaped?.errors ?? [];
    this.headers = response.headers;
  }
}

/** No answer came: the connection failed, or the timeout passed, on every attempt. */
export class FromagerieConnectionError extends Error {
  override readonly name = 'FromagerieConnectionError';
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

function isErrorBody(body: unknown): body is { type: string; message: string; errors?: FieldError[] } {
  if (typeof body !== 'object' || body === null) return false;
  const candidate = body as Record<string, unknown>;
  return typeof candidate.type === 'string' && typeof candidate.message === 'string' && (candidate.errors === undefined || Array.isArray(candidate.errors));
}
