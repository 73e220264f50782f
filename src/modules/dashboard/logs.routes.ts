import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { clientGone } from '../../http/client-gone.js';
import { systemClock } from '../../kernel/clock.js';
import { curlOf, type RequestLogFilters, type RequestLogRow } from '../request-log/request-log.module.js';
import { httpStatusBadge } from './badges.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { eventRow, LOG_PAGE_SIZE, TAIL_BATCH, TAIL_WAIT_S, tailDelay, tailUrl, type EventPageJson } from './event-views.js';
import { when } from './format.js';
import { queryOf } from './webhook-views.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const Filters = {
  status: Type.Optional(Type.String({ maxLength: 3 })),
  method: Type.Optional(Type.Union([Type.Literal(''), Type.Enum(METHODS)])),
  path: Type.Optional(Type.String({ maxLength: 2000 })),
  credential: Type.Optional(Type.String({ maxLength: 200 })),
  idempotencyKey: Type.Optional(Type.String({ maxLength: 255 })),
  requestId: Type.Optional(Type.String({ maxLength: 200 })),
};
const ListQuery = Type.Object({ ...Filters, cursor: Type.Optional(Type.String({ maxLength: 400 })) });
const TailQuery = Type.Object({ ...Filters, after: Type.String({ minLength: 1, maxLength: 400 }), wait: Type.Optional(Type.Literal('0')) });
const RequestParams = Type.Object({ requestId: Type.String({ minLength: 1, maxLength: 200 }) });

interface LogQueryValues {
  status?: string;
  method?: string;
  path?: string;
  credential?: string;
  idempotencyKey?: string;
  requestId?: string;
}
type LogForm = Required<LogQueryValues>;

/** The filters as the form shows them (empty for none) and as the request log takes them. */
function logFilters(query: LogQueryValues): { form: LogForm; filters: Omit<RequestLogFilters, 'limit'> } {
  const form = {
    status: (query.status ?? '').trim(),
    method: query.method ?? '',
    path: (query.path ?? '').trim(),
    credential: (query.credential ?? '').trim(),
    idempotencyKey: (query.idempotencyKey ?? '').trim(),
    requestId: (query.requestId ?? '').trim(),
  };
  const filters: Omit<RequestLogFilters, 'limit'> = {};
  for (const [name, value] of Object.entries(form) as [keyof LogForm, string][]) if (value !== '') filters[name] = value;
  return { form, filters };
}

function logRow(row: RequestLogRow, now: number) {
  return {
    requestId: row.request_id,
    status: httpStatusBadge(row.status),
    method: row.method,
    path: row.path,
    duration: `${row.duration_ms} ms`,
    credential: row.credential_label,
    when: when(row.created_at, now),
    href: `/dashboard/logs/${encodeURIComponent(row.request_id)}`,
  };
}

/** A stored JSON text indented for reading; other text as it is. */
function pretty(text: string | null): string | null {
  if (text === null) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const headerRows = (json: string) => Object.entries(JSON.parse(json || '{}') as Record<string, string>).map(([name, value]) => ({ name, value }));

/** Events a request caused are recorded while it runs: looked for from a minute before it started to a minute after it ended (nothing indexes request_id). */
const AROUND_MS = 60_000;

/**
 * The Logs pages (issue 31, page 2): the request log (GET /v2/request-logs, as it decides who
 * sees what) newest first, its filters in the URL and the same live tail as Events; one request
 * with its headers and bodies as kept (redacted), the events it caused, and "Copy as curl".
 */
export function logRoutes(context: DashboardContext): FastifyPluginAsync {
  const { requestLogs, events } = context;
  const now = () => (context.clock ?? systemClock).now();
  return async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

    scope.get('/logs', { schema: { querystring: ListQuery } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { form, filters } = logFilters(request.query);
      const first = request.query.cursor === undefined;
      // The head before the page: an entry written in between is in the tail, never lost.
      const head = first ? (await requestLogs.list(principal, { ...filters, limit: 1, after: 'now' })).nextAfter : null;
      const page = await requestLogs.list(principal, { ...filters, limit: LOG_PAGE_SIZE, ...(request.query.cursor !== undefined && { cursor: request.query.cursor }) });
      const here = `/dashboard/logs${queryOf(form)}`;
      return reply.view('logs', {
        ...layoutOf(context, request, reply, 'Logs', 'logs'),
        form,
        methods: METHODS.map((name) => ({ name, selected: name === form.method })),
        filtered: Object.values(form).some((value) => value !== ''),
        rows: page.items.map((row) => logRow(row, now())),
        tail: first && head ? tailUrl('/dashboard/logs/tail', form, head, false) : null,
        here,
        newest: first ? null : here,
        next: page.nextCursor ? `/dashboard/logs${queryOf({ ...form, cursor: page.nextCursor })}` : null,
      });
    });

    // The live tail's fragment: held until an entry it would list is written (or TAIL_WAIT_S), then the new rows, newest first, and the next poller.
    scope.get('/logs/tail', { schema: { querystring: TailQuery } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { form, filters } = logFilters(request.query);
      const polling = request.query.wait === '0';
      const page = await requestLogs.list(principal, { ...filters, limit: TAIL_BATCH, after: request.query.after, waitSeconds: polling ? 0 : TAIL_WAIT_S }, clientGone(reply.raw));
      const after = page.nextAfter ?? request.query.after;
      return reply.view('log-tail', { rows: page.items.reverse().map((row) => logRow(row, now())), tail: tailUrl('/dashboard/logs/tail', form, after, polling), delay: tailDelay(polling, page.items.length) });
    });

    scope.get('/logs/:requestId', { schema: { params: RequestParams } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const row = await requestLogs.get(principal, request.params.requestId);
      const started = Date.parse(row.created_at);
      const caused = JSON.parse(
        (await events.list(principal, { limit: 50, requestId: row.request_id, createdGte: new Date(started - AROUND_MS).toISOString(), createdLt: new Date(started + row.duration_ms + AROUND_MS).toISOString() })).body,
      ) as EventPageJson;
      return reply.view('log', {
        ...layoutOf(context, request, reply, `${row.method} ${row.path}`, 'logs'),
        entry: { ...logRow(row, now()), query: row.query, idempotencyKey: row.idempotency_key, clientIp: row.client_ip, userAgent: row.user_agent, traceId: row.trace_id, credentialKind: row.credential_kind },
        requestHeaders: headerRows(row.request_headers),
        responseHeaders: headerRows(row.response_headers),
        requestBody: pretty(row.request_body),
        responseBody: pretty(row.response_body),
        events: caused.items.map((item) => eventRow(item, now())),
        curl: curlOf(row, `${request.protocol}://${request.host}`),
      });
    });
  };
}
