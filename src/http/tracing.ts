import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestSpan, Tracing } from '../kernel/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's trace (W3C trace id), when tracing is on: the request log keeps it. */
    traceId: string | undefined;
  }
}

/**
 * A SERVER span per request (docs/operations.md, "Traces"). It starts when Fastify asks for the
 * request id, the first thing it does with a request, so its "incoming request" log line already
 * carries the trace id; it becomes the current span there (enterWith on the request's own async
 * resource, which every later hook, the body's events and the handler run in), and ends once the
 * answer is sent or the client went away.
 */
export function tracedRequestIds(tracer: Tracing, ids: (request: IncomingMessage) => string): (request: IncomingMessage) => string {
  if (!tracer.enabled) return ids;
  return (raw) => {
    const span = tracer.startRequestSpan({ method: raw.method ?? 'GET', path: (raw.url ?? '/').split('?')[0]!, headers: raw.headers });
    if (span) {
      started.set(raw, span);
      span.enter();
    }
    return ids(raw);
  };
}

const started = new WeakMap<IncomingMessage, RequestSpan>();

export function registerTracing(app: FastifyInstance, tracer: Tracing): void {
  app.decorateRequest('traceId', undefined);
  if (!tracer.enabled) return;
  const spanOf = (request: FastifyRequest) => started.get(request.raw);
  app.addHook('onRequest', (request, _reply, done) => {
    const span = spanOf(request);
    if (span) {
      request.traceId = span.traceId;
      // genReqId ran in this same synchronous turn today; entering again keeps the span current should that change.
      span.enter();
    }
    done();
  });
  const end = (request: FastifyRequest, attributes: Record<string, string | number | boolean | undefined>) => {
    const span = spanOf(request);
    if (!span) return;
    started.delete(request.raw);
    span.end({ 'http.route': request.routeOptions.url, ...attributes });
  };
  app.addHook('onResponse', (request, reply, done) => {
    end(request, { 'http.response.status_code': reply.statusCode });
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    spanOf(request)?.fail('the client went away before the answer');
    end(request, { 'http.request.aborted': true });
    done();
  });
}
