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
export const isLogRead = (route: string | undefined) => route !== undefined && route.startsWith('/v2/request-logs');

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

/**
 * What the answer's hook keeps of one request, as plain values: a batch of them crosses to the
 * writer thread (request-log.writer-thread.ts) by structured clone, which copies an array of
 * primitives at about a third of an object's cost. Everything else an entry holds (its time as
 * text, the path and query redacted, lengths cut) is made by the writer, off the event loop:
 * entryOf. Headers and bodies, kept only by REQUEST_LOG_BODIES, are made here from the live
 * request, already redacted.
 */
export type Capture = [
  requestId: string,
  accountId: number,
  environment: string,
  answeredAtMs: number,
  durationMs: number,
  method: string,
  route: string | null,
  url: string,
  status: number,
  credentialKind: string,
  credentialLabel: string,
  idempotencyKey: string | null,
  clientIp: string,
  userAgent: string | null,
  traceId: string | null,
  requestHeaders: string | null,
  responseHeaders: string | null,
  requestBody: string | null,
  responseBody: string | null,
];

/** The capture of one answered request (its answer's body captured at onSend, when kept). */
export function captureOf(request: FastifyRequest, reply: FastifyReply, route: string | undefined, principal: Principal, policy: BodyPolicy, answer: string | null | undefined, clock: Clock): Capture {
  const status = reply.statusCode;
  // Headers go with the bodies (REQUEST_LOG_BODIES): every byte stored is paid by every request.
  const bodies = keepsBodies(policy, status);
  return [
    String(request.id),
    principal.accountId,
    principal.environment,
    clock.now(),
    reply.elapsedTime,
    request.method,
    route ?? null,
    request.url,
    status,
    principal.credential.kind,
    // Made here, not by the writer: the presented key itself never crosses to the thread.
    credentialLabel(principal, request),
    single(request.headers['idempotency-key']) ?? null,
    request.ip,
    single(request.headers['user-agent']) ?? null,
    request.traceId ?? null,
    bodies ? headerJson(request.headers) : null,
    bodies ? headerJson(reply.getHeaders()) : null,
    bodies ? requestBody(request) : null,
    bodies ? (answer ?? null) : null,
  ];
}

/** The row for one capture: run by the writer (its thread, or the event loop: AppConfig.requestLogWriter). */
export function entryOf(capture: Capture): RequestLogEntry {
  const [requestId, accountId, environment, answeredAtMs, durationMs, method, route, url, status, credentialKind, label, idempotencyKey, clientIp, userAgent, traceId, requestHeaders, responseHeaders, body, answer] = capture;
  const queryAt = url.indexOf('?');
  const path = redactText(queryAt === -1 ? url : url.slice(0, queryAt));
  return {
    request_id: requestId,
    account_id: accountId,
    environment,
    created_at: new Date(answeredAtMs - durationMs).toISOString(),
    method,
    route: route ?? path,
    path: path.slice(0, 2000),
    query: queryAt === -1 ? '' : redactQuery(url.slice(queryAt + 1)).slice(0, 2000),
    status,
    duration_ms: Math.round(durationMs * 100) / 100,
    credential_kind: credentialKind,
    credential_label: label,
    idempotency_key: idempotencyKey ? idempotencyKey.slice(0, 255) : null,
    client_ip: clientIp,
    user_agent: userAgent ? userAgent.slice(0, TEXT_LIMIT) : null,
    request_headers: requestHeaders ?? '{}',
    response_headers: responseHeaders ?? '{}',
    request_body: body,
    response_body: answer,
    trace_id: traceId,
  };
}
