import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../kernel/principal.js';
import { REDACTED, isSecretHeader, redactQuery, redactText, redactValue } from '../../kernel/redaction.js';
import type { Clock } from '../../kernel/clock.js';
import type { RequestLogEntry } from './request-log.recorder.js';

/** REQUEST_LOG_BODIES: which answers keep their bodies. */
export type BodyPolicy = 'all' | 'errors' | 'none';

/** Each body is kept up to this many characters, then cut with a note of its size. */
export const BODY_LIMIT = 16 * 1024;
const TEXT_LIMIT = 500;
/** Whether JSON text may carry a secret by name or shape: only then is it parsed to redact it. */
const MAY_NAME_SECRET = /pass(word|wd|phrase)|secret|token|"key"|"code"|sk_|whsec_|oat_|ort_|oac_|cs_|eyJ/i;

/** Reading the log is not itself logged: a tail would otherwise wake on its own polls. */
export const isLogRead = (request: FastifyRequest) => (request.routeOptions.url ?? '').startsWith('/v2/request-logs');

/** Whether an answer of this status keeps its bodies. */
export function keepsBodies(policy: BodyPolicy, status: number): boolean {
  return policy === 'all' || (policy === 'errors' && status >= 400);
}

function cut(text: string): string {
  return text.length <= BODY_LIMIT ? text : `${text.slice(0, BODY_LIMIT)}…[truncated: ${text.length} characters in all]`;
}

/** JSON text redacted (parsed only when it may name or hold a secret); other text by shape. */
export function redactBody(text: string, json: boolean): string {
  if (!json || !MAY_NAME_SECRET.test(text)) return cut(redactText(text));
  try {
    return cut(JSON.stringify(redactValue(JSON.parse(text))));
  } catch {
    return cut(redactText(text));
  }
}

function requestBody(request: FastifyRequest): string | null {
  if (/^multipart\//i.test(request.headers['content-type'] ?? '')) return '[multipart body not kept]';
  const body = request.body;
  if (body === undefined || body === null) return null;
  if (Buffer.isBuffer(body)) return `[${body.length} bytes of ${request.headers['content-type'] ?? 'binary'}]`;
  if (typeof body === 'string') return redactBody(body, false);
  return cut(JSON.stringify(redactValue(body)));
}

/** The answer's body as sent (onSend's payload): text kept, bytes and streams described. */
export function answerBody(payload: unknown, contentType: string): string | null {
  if (payload === undefined || payload === null || payload === '') return null;
  const json = contentType.includes('json');
  if (typeof payload === 'string') return redactBody(payload, json);
  if (Buffer.isBuffer(payload)) return /^(text\/|application\/(json|problem\+json|xml))/.test(contentType) ? redactBody(payload.toString('utf8'), json) : `[${payload.length} bytes of ${contentType || 'binary'}]`;
  return '[streamed body not kept]';
}

/** Headers as a JSON object: credentials and cookies by name, credential-shaped values by shape. */
export function headerJson(headers: Record<string, unknown>): string {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    out[name] = isSecretHeader(name) ? REDACTED : redactText(text).slice(0, TEXT_LIMIT);
  }
  return JSON.stringify(out);
}

/** The credential's public label: a key's 16-character prefix (as `GET /v2/api-keys` shows it), an OAuth client's id. */
export function credentialLabel(principal: Principal, request: FastifyRequest): string {
  const { credential } = principal;
  if (credential.kind === 'oauth_token') return credential.grant?.clientId ?? `oauth_token:${credential.id}`;
  if (credential.kind === 'api_key') {
    const header = request.headers['x-api-key'];
    const presented = typeof header === 'string' ? header : (request.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    return presented.startsWith('sk_') ? presented.slice(0, 16) : `api_key:${credential.id}`;
  }
  return `${credential.kind}:${credential.id}`;
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** The entry for one answered request (its answer's body captured at onSend, when kept). */
export function entryOf(request: FastifyRequest, reply: FastifyReply, principal: Principal, policy: BodyPolicy, answer: string | null | undefined, clock: Clock): RequestLogEntry {
  const queryAt = request.url.indexOf('?');
  const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
  const status = reply.statusCode;
  const bodies = keepsBodies(policy, status);
  const idempotencyKey = single(request.headers['idempotency-key']);
  const userAgent = single(request.headers['user-agent']);
  return {
    request_id: String(request.id),
    account_id: principal.accountId,
    environment: principal.environment,
    created_at: new Date(clock.now() - reply.elapsedTime).toISOString(),
    method: request.method,
    route: request.routeOptions.url ?? redactText(path),
    path: redactText(path).slice(0, 2000),
    query: queryAt === -1 ? '' : redactQuery(request.url.slice(queryAt + 1)).slice(0, 2000),
    status,
    duration_ms: Math.round(reply.elapsedTime * 100) / 100,
    credential_kind: principal.credential.kind,
    credential_label: credentialLabel(principal, request),
    idempotency_key: idempotencyKey ? idempotencyKey.slice(0, 255) : null,
    client_ip: request.ip,
    user_agent: userAgent ? userAgent.slice(0, TEXT_LIMIT) : null,
    // Headers go with the bodies (REQUEST_LOG_BODIES): every byte stored is paid by every request.
    request_headers: bodies ? headerJson(request.headers) : '{}',
    response_headers: bodies ? headerJson(reply.getHeaders()) : '{}',
    request_body: bodies ? requestBody(request) : null,
    response_body: bodies ? (answer ?? null) : null,
    trace_id: request.traceId ?? null,
  };
}
