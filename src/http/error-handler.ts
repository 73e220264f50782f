import type { IncomingMessage, ServerResponse } from 'node:http';
import { VISIBLE_TEXT_MESSAGE, VISIBLE_TEXT_PATTERN } from '../kernel/text.js';
import { DATE_MESSAGE, INSTANT_MESSAGE } from '../kernel/instants.js';
import { rawAnswer, undecodableUrl } from './request-guards.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AppError,
  InvalidRequestError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
  ValidationFailedError,
  type FieldError,
} from '../kernel/errors.js';

interface AjvError {
  instancePath: string;
  schemaPath?: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** An allowed value as a client writes it: text bare, anything else as JSON. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** `must be one of: a, b, c`; `null` among them is listed too. */
const oneOf = (values: unknown[]) => `must be one of: ${[...new Set(values.map(shown))].join(', ')}`;

/** A union's failure as the one rule that matters, in place of Ajv's error per branch and its own. */
function unionFailure(union: AjvError, branches: AjvError[][]): AjvError[] {
  const atRoot = (e: AjvError) => e.instancePath === union.instancePath;
  // A value of none of the branches' types or constants: what it may be (an enum written as
  // `anyOf` of `const`s, or a number or null), in one message.
  const refusals = branches.map((errors) => errors.find((e) => atRoot(e) && (e.keyword === 'type' || e.keyword === 'const' || e.keyword === 'enum')));
  if (refusals.every((e) => e !== undefined)) {
    const values = refusals.flatMap((e) => (e.keyword === 'const' ? [e.params.allowedValue] : e.keyword === 'enum' ? ((e.params.allowedValues as unknown[] | undefined) ?? []) : []));
    const types = refusals.flatMap((e) => (e.keyword === 'type' ? String(e.params.type).split(',') : []));
    if (types.length === 0) return [{ ...union, keyword: 'enum', message: oneOf(values), params: { allowedValues: values } }];
    if (values.length === 0) return [{ ...union, keyword: 'type', message: `must be ${[...new Set(types)].join(' or ')}`, params: { type: types.join(',') } }];
    const others = types.filter((type) => type !== 'null');
    return [{ ...union, keyword: 'enum', message: others.length === 0 ? oneOf([...values, null]) : `must be ${[...new Set(others)].join(' or ')} or one of: ${[...new Set(values.map(shown))].join(', ')}`, params: {} }];
  }
  // The branches the value's type fits: their errors are the rules it broke (the fewest, when several fit).
  const fitting = branches.filter((_, i) => refusals[i] === undefined);
  const fewest = Math.min(...fitting.map((errors) => errors.length));
  return fitting.find((errors) => errors.length === fewest)!;
}

/**
 * Ajv reports a failed `anyOf`/`oneOf` as every branch's errors and then its own (`must be >= 0;
 * must be null; must match a schema in anyOf`): each union is replaced by the errors of the
 * branch the value's type fits, or by one message naming what the value may be. Ajv records a
 * union's branch errors just before its own, so the innermost unions are resolved first.
 */
function withUnionsResolved(errors: AjvError[]): AjvError[] {
  const out: AjvError[] = [];
  for (const error of errors) {
    const union = (error.keyword === 'anyOf' || error.keyword === 'oneOf') && error.schemaPath !== undefined;
    if (!union) {
      out.push(error);
      continue;
    }
    const prefix = `${error.schemaPath}/`;
    const under = (e: AjvError) => e.schemaPath?.startsWith(prefix) === true && (e.instancePath === error.instancePath || e.instancePath.startsWith(`${error.instancePath}/`));
    let start = out.length;
    while (start > 0 && under(out[start - 1]!)) start--;
    const inside = out.splice(start);
    // A oneOf that more than one branch matched has no branch errors: its own message stands.
    if (inside.length === 0) {
      out.push(error);
      continue;
    }
    const branches = new Map<string, AjvError[]>();
    for (const e of inside) {
      const branch = e.schemaPath!.slice(prefix.length).split('/')[0]!;
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    out.push(...unionFailure(error, [...branches.values()]));
  }
  return out;
}

/** What a refused format means, rather than Ajv's `must match format "date-time"`. */
const FORMAT_MESSAGES: ReadonlyMap<string, string> = new Map([['date-time', INSTANT_MESSAGE], ['date', DATE_MESSAGE]]);

/** JSON pointer `/servingTempCelsius/min` to `servingTempCelsius.min`, naming the offending property. */
export function fieldErrors(errors: AjvError[], part: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of withUnionsResolved(errors)) {
    const segments = error.instancePath.split('/').filter(Boolean);
    if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
    if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
    const field = segments.join('.') || part;
    const message =
      error.keyword === 'format' && typeof error.params.format === 'string' && FORMAT_MESSAGES.has(error.params.format)
        ? FORMAT_MESSAGES.get(error.params.format)!
        : error.keyword === 'pattern' && error.params.pattern === VISIBLE_TEXT_PATTERN
        ? VISIBLE_TEXT_MESSAGE
        : error.keyword === 'additionalProperties'
        ? 'is not a known field'
        : error.keyword === 'required'
          ? 'is required'
          : error.keyword === 'enum' && Array.isArray(error.params.allowedValues) && error.params.allowedValues.length > 0
            ? oneOf(error.params.allowedValues)
            : error.keyword === 'const' && 'allowedValue' in error.params
              ? `must be ${shown(error.params.allowedValue)}`
              : (error.message ?? 'is invalid');
    const key = `${field}:${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
  }
  return out;
}

/** The AppError a thrown value stands for, or null for an unknown error (a bug: the caller answers a bare 500). */
export function toAppError(error: FastifyError & { validation?: AjvError[]; validationContext?: string }): AppError | null {
  if (error instanceof AppError) return error;
  if (error.validation) {
    const part = error.validationContext ?? 'body';
    const errors = fieldErrors(error.validation, part);
    const summary = errors.map((e) => `${e.field} ${e.message}`).join('; ');
    return part === 'body'
      ? new ValidationFailedError(`The request body is invalid: ${summary}.`, errors)
      : new InvalidRequestError(`Invalid ${part === 'querystring' ? 'query parameter' : part}: ${summary}.`, errors);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidRequestError('The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new PayloadTooLargeError('The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new UnsupportedMediaTypeError('Unsupported Content-Type: send the body this operation documents (application/json, or multipart/form-data for image uploads).');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new UnsupportedMediaTypeError('This operation takes multipart/form-data.');
    case 'FST_PROTO_VIOLATION':
      return new InvalidRequestError('The request body contains a forbidden property name.');
    case 'FST_ERR_BAD_URL':
      return undecodableUrl('path');
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new InvalidRequestError('The request URL is malformed.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new InvalidRequestError('A path parameter is too long.');
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new InvalidRequestError(error.message || 'The request is invalid.');
  }
  if (isDatabaseUnavailable(error)) {
    const unavailable = new ServiceUnavailableError('The service cannot reach its database right now; nothing was changed. Try again shortly.');
    unavailable.headers['retry-after'] = '5';
    return unavailable;
  }
  return null;
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  const body: Record<string, unknown> = { code: error.status, type: error.type, message: error.message };
  if (error.errors) body.errors = error.errors;
  return reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(body);
}

/**
 * Errors Fastify raises before routing (a URL that does not decode, a path parameter over
 * maxParamLength); without this option it answers them in its own shape, not ours.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  sendError(reply, toAppError(error) ?? new InvalidRequestError('The request URL is malformed.'));
}

/**
 * Bytes Node's HTTP parser refused before there was a request (a bad request line, control
 * bytes in a header, broken framing, headers over 16 KB): answered in the Error shape too.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request did not arrive in time.']
        : [400, 'The request is not valid HTTP/1.1.'];
  // Never after (or inside) an answer already on its way: that would corrupt it (a body
  // stalled after an early 401 times out too). Node's own handler checks the same.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!inFlight?.headersSent) rawAnswer(socket, status, message);
  socket.destroy(error);
}

/** Node answers an Expect other than 100-continue with a bare 417 unless someone listens. */
function expectationFailed(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify({ code: 417, type: 'invalid_request', message: 'Expect supports only "100-continue".' });
  response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
}

export function registerErrorHandling(app: FastifyInstance, allowedMethods: (url: string) => string[]): void {
  app.server.on('checkExpectation', expectationFailed);
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // Under a wildcard route (the docs page's static files) a client error means there is no
    // file for that path: `send` answers 403 for `../` and 400 for a NUL, which say more.
    if (!(error instanceof AppError) && request.routeOptions.url?.endsWith('*') && (error.statusCode ?? 500) >= 400 && (error.statusCode ?? 500) < 500) {
      return sendError(reply, noRoute(request));
    }
    const appError = toAppError(error);
    if (appError) {
      // A lost database answers hundreds of 503s a second: one line each, without the stack
      // (the cause is the database, not this code), at warn.
      if (appError.status === 503 && isDatabaseUnavailable(error)) request.log.warn({ cause: error.message, code: (error as { code?: unknown }).code }, 'database unavailable');
      else if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, appError);
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).type('application/json; charset=utf-8').send({
      code: 500,
      type: 'internal',
      message: `Something went wrong on our side. Quote request id ${request.id} if you contact support.`,
    });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = allowedMethods(path);
    // A route that takes this method but found nothing under it (a static file, say) is a 404.
    if (allowed.length > 0 && !allowed.includes(request.method)) return sendError(reply, new MethodNotAllowedError(request.method, allowed));
    return sendError(reply, noRoute(request));
  });
}

function noRoute(request: FastifyRequest): NotFoundError {
  return new NotFoundError(`No route ${request.method} ${request.url.split('?')[0] ?? '/'}. The API lives under /v2; see /docs.`);
}
