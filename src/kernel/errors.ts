/** The closed list of error `type`s (decisions.md §9); documented in the OpenAPI Error schema. */
export const ERROR_TYPES = [
  'invalid_request',
  'validation_failed',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'precondition_failed',
  'conflict',
  'failed_dependency',
  'payload_too_large',
  'unsupported_media_type',
  'not_acceptable',
  'rate_limited',
  'internal',
  'service_unavailable',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

export interface FieldError {
  field: string;
  message: string;
}

/** A failure the client can act on. Services throw these; one handler turns them into HTTP. */
export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly type: ErrorType;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> = {};

  constructor(message: string, errors?: FieldError[]) {
    super(message);
    this.name = new.target.name;
    this.errors = errors;
  }
}

export class InvalidRequestError extends AppError {
  readonly status = 400;
  readonly type = 'invalid_request';
}

export class ValidationFailedError extends AppError {
  readonly status = 422;
  readonly type = 'validation_failed';
  constructor(message: string, errors: FieldError[]) {
    super(message, errors);
  }
  static field(field: string, message: string): ValidationFailedError {
    return new ValidationFailedError(`${field}: ${message}`, [{ field, message }]);
  }
}

export class UnauthorizedError extends AppError {
  readonly status = 401;
  readonly type = 'unauthorized';
  constructor(message = 'Authentication required: send an API key in X-API-Key or a bearer token in Authorization.') {
    super(message);
    this.headers['www-authenticate'] = 'Bearer realm="fromagerie"';
  }
}

export class ForbiddenError extends AppError {
  readonly status = 403;
  readonly type = 'forbidden';
}

export class NotFoundError extends AppError {
  readonly status = 404;
  readonly type = 'not_found';
}

export class PreconditionFailedError extends AppError {
  readonly status = 412;
  readonly type = 'precondition_failed';
}

export class MethodNotAllowedError extends AppError {
  readonly status = 405;
  readonly type = 'method_not_allowed';
  constructor(method: string, allowed: string[]) {
    super(`${method} is not allowed here; allowed: ${allowed.join(', ')}.`);
    this.headers.allow = allowed.join(', ');
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
  readonly type = 'conflict';
}

export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  readonly type = 'payload_too_large';
}

export class UnsupportedMediaTypeError extends AppError {
  readonly status = 415;
  readonly type = 'unsupported_media_type';
}

export class NotAcceptableError extends AppError {
  readonly status = 406;
  readonly type = 'not_acceptable';
}

export class ServiceUnavailableError extends AppError {
  readonly status = 503;
  readonly type = 'service_unavailable';
}

/** Over a rate limit (decisions.md §7): `Retry-After` says when to come back. */
export class TooManyRequestsError extends AppError {
  readonly status = 429;
  readonly type = 'rate_limited';
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  }
}
