import type { FastifyRequest } from 'fastify';
import type { RequestHook } from '../kernel/request-stage.js';
import Negotiator from 'negotiator';
import { NotAcceptableError } from '../kernel/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Media types the operation can answer with, preferred first; JSON when not said. */
    produces?: readonly string[];
  }
  interface FastifyRequest {
    /** The representation chosen from the operation's `produces` by the request's Accept. */
    representation: string;
  }
}

const JSON_ONLY = ['application/json'] as const;

function answersWithBody(request: FastifyRequest): boolean {
  const responses = (request.routeOptions.schema as { response?: Record<string, unknown> } | undefined)?.response;
  return !responses || Object.keys(responses).some((status) => /^2/.test(status) && status !== '204');
}

/**
 * Proactive negotiation (RFC 9110 §12.5.1) with `negotiator`: q-values count (`text/csv;q=0`
 * refuses CSV), and an Accept that allows none of the operation's representations is a 406,
 * answered in the JSON Error shape all the same. Runs after authentication, before any work.
 * A pipeline stage (pipeline.ts); `request.representation` is JSON until it runs.
 */
export const negotiation: RequestHook = (request, _reply, next) => {
  if (!request.routeOptions.url?.startsWith('/v2')) return next();
  const offered = request.routeOptions.config?.produces ?? JSON_ONLY;
  // No Accept, or an empty one, accepts anything (RFC 9110 §12.5.1).
  if (request.headers.accept === undefined || request.headers.accept.trim() === '') {
    request.representation = offered[0]!;
    return next();
  }
  const chosen = new Negotiator(request).mediaType([...offered]);
  if (chosen) request.representation = chosen;
  else if (answersWithBody(request)) return next(new NotAcceptableError(`This operation answers with ${offered.join(' or ')}; your Accept header allows none of them.`));
  next();
};
