import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Seconds: half a millisecond (a cached read) to five seconds (past any sane answer). */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** The route label of a request no route took (404s of unknown paths): one label, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched';

export type ResponseHook = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

/**
 * Every answer, as it is sent, by method, route pattern and status. The pattern
 * (`/v2/cheeses/:id`), never the URL: labels stay as many as the routes, whatever clients
 * ask for. The histogram's `_count` is the request counter, so there is no second one.
 */
export function httpMetrics(registry: Registry): ResponseHook {
  const duration = new Histogram({
    name: 'fromagerie_http_request_duration_seconds',
    help: 'Time from the request arriving to its answer sent, by method, route pattern and status; _count counts requests.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'fromagerie_rate_limit_refusals_total',
    help: 'Requests answered 429 (a rate limit or a brute-force limit), by route pattern.',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  // Callback style: it runs on every request, and a promise per request is measurable.
  return (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const status = reply.statusCode;
    duration.observe({ method: request.method, route, status }, reply.elapsedTime / 1000);
    if (status === 429) refusals.inc({ route });
    done();
  };
}
