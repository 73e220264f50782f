import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { clientGone } from '../../http/client-gone.js';
import { errorResponses } from '../../http/common.schema.js';
import type { RequestLogRow } from './request-log.repository.js';
import { RequestIdParams, RequestLogEntry, RequestLogListQuery, RequestLogPage } from './request-log.schema.js';
import type { RequestLogService } from './request-log.service.js';

/**
 * The account's own credentials only (API keys, login tokens): the log shows every credential's
 * requests, so a third-party app's OAuth token reads none of it (decisions: request log).
 */
const READ_LOGS: AuthRequirement = { schemes: ['api_key', 'bearer_auth'], scope: 'read:logs' };
const TAGS = ['request-logs'];
const ACCESS =
  'Needs `read:logs` (customers may hold it; `admin` implies it) on an API key or login token of the account: an OAuth app\'s token is refused. A customer sees its account\'s requests, staff every account\'s; only the credential\'s environment (a test key sees test requests). Every /v2 request made with a valid credential is recorded, once answered, whatever its status (unauthenticated requests belong to no account and are not); reading the log is not itself recorded. Entries are kept `REQUEST_LOG_RETENTION_DAYS` (7 by default).';

function json(row: RequestLogRow) {
  return {
    object: 'request_log' as const,
    requestId: row.request_id,
    createdAt: row.created_at,
    method: row.method,
    route: row.route,
    path: row.path,
    query: row.query,
    status: row.status,
    durationMs: row.duration_ms,
    credential: { kind: row.credential_kind as 'api_key', label: row.credential_label },
    accountId: String(row.account_id),
    idempotencyKey: row.idempotency_key,
    clientIp: row.client_ip,
    userAgent: row.user_agent,
    traceId: row.trace_id,
    request: { headers: JSON.parse(row.request_headers) as Record<string, string>, body: row.request_body },
    response: { headers: JSON.parse(row.response_headers) as Record<string, string>, body: row.response_body },
  };
}

export const requestLogRoutes: FastifyPluginAsyncTypebox<{ logs: RequestLogService }> = async (app, { logs }) => {
  app.addSchema(RequestLogEntry);

  app.get('/request-logs', {
    config: { auth: READ_LOGS },
    schema: {
      tags: TAGS,
      operationId: 'listRequestLogs',
      summary: 'The request log: the requests your account made, newest first, or tailed',
      description:
        `What your integration sent and what it got back: method, path, status, duration, credential, \`Idempotency-Key\`, request id, and headers and bodies with every secret redacted. Filters combine. Tailing: \`GET /request-logs?after=now&wait=25\`, then \`after=<nextAfter>\` each time, holds each request until an entry arrives. ${ACCESS}`,
      querystring: RequestLogListQuery,
      response: { 200: RequestLogPage, ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const q = request.query;
    const page = await logs.list(principalOf(request), {
      limit: q.limit ?? 20,
      cursor: q.cursor,
      status: q.status,
      method: q.method,
      path: q.path,
      credential: q.credential,
      idempotencyKey: q.idempotency_key,
      requestId: q.request_id,
      createdGte: q.created_gte,
      createdLt: q.created_lt,
      order: q.order,
      after: q.after,
      waitSeconds: q.wait,
    }, clientGone(reply.raw));
    return { ...page, items: page.items.map(json) };
  });

  app.get('/request-logs/:requestId', {
    config: { auth: READ_LOGS },
    schema: {
      tags: TAGS,
      operationId: 'getRequestLog',
      summary: 'One request of the log, by its request id',
      description: `The newest request with this \`X-Request-Id\` (an event's \`metadata.request_id\` names one). ${ACCESS}`,
      params: RequestIdParams,
      response: { 200: { $ref: 'RequestLogEntry#' }, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => json(await logs.get(principalOf(request), request.params.requestId)));
};
