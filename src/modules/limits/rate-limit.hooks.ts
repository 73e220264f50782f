import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModuleStage } from '../../kernel/request-stage.js';
import type { OperationDocumenter } from '../../kernel/module.js';
import { TooManyRequestsError } from '../../kernel/errors.js';
import { ExpiringCache } from '../../kernel/expiring-cache.js';
import type { Clock } from '../../kernel/clock.js';
import type { Plan } from '../../kernel/plans.js';
import type { Decision, RateLimiter } from './rate-limiter.js';

/**
 * Not limited: health checks from load balancers, and the docs page with its files (static,
 * compressed once). The OpenAPI document is limited wherever it is served (`/v2/openapi.json`,
 * the docs page's `/docs/json` and `/docs/yaml`): 461 KB for a request of a hundred bytes.
 */
// The dashboard's pages are not the API: they spend none of its budget (its sign-in has the login guard).
const EXEMPT = /^\/(?:v2\/health(?:\/live|\/ready)?|docs(?:\/(?!json$|yaml$).*)?|dashboard(?:\/.*)?)$/;
/** How long an account's plan is trusted unless the config says otherwise (tests shorten it). */
export const PLAN_CACHE_MS = 5000;
const MAX_CACHED_PLANS = 10_000;

/**
 * Every request but the exempt ones draws from its caller's buckets after authentication: the
 * account's plan for a valid credential (plans cached 5 s), the client address otherwise.
 * `RateLimit-Policy` and `RateLimit` go on every such response; over the limit, 429 with
 * `Retry-After`. Refusals draw too, or probing would be free (issue 16 §6): the `refused` stage
 * is told of a request the pipeline turns away (401, 403, 400) and of one no route takes (404,
 * 405), with the principal set when the credential was valid, so that a 403 costs the account
 * what a 200 does and a guessed key costs its address. No stage at all when limits are off.
 */
export function rateLimitStages(options: { limiter: RateLimiter; planOf: (accountId: number) => Promise<Plan>; planCacheMs?: number; clock?: Clock }): ModuleStage[] {
  const { limiter } = options;
  const plans = new ExpiringCache<number, Plan>({ ttlMs: options.planCacheMs ?? PLAN_CACHE_MS, max: MAX_CACHED_PLANS, clock: options.clock });
  const planOf = async (accountId: number): Promise<Plan> => {
    const plan = await options.planOf(accountId);
    plans.set(accountId, plan);
    return plan;
  };
  const check = (request: FastifyRequest, reply: FastifyReply, decision: Decision) => {
    reply.headers(decision.headers);
    if (!decision.allowed) {
      throw new TooManyRequestsError(`Rate limit reached: retry in ${Math.ceil(decision.retryAfterSeconds)} s (RateLimit-Policy says which limit).`, decision.retryAfterSeconds);
    }
  };
  /** Calls `done` once the decision is known: at once when it is (local buckets, a cached plan). */
  const settle = (request: FastifyRequest, reply: FastifyReply, decision: Decision | Promise<Decision>, done: (error?: Error) => void) => {
    if (decision instanceof Promise) {
      decision.then((d) => check(request, reply, d)).then(() => done(), done);
      return;
    }
    try {
      check(request, reply, decision);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
  // Callback style, synchronous when the plan is cached and the buckets are local: this runs
  // on every request, and each promise on the way cost more than the check (docs/performance.md).
  const limit = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const principal = request.principal;
    if (!principal) return settle(request, reply, limiter.admit({ ip: request.ip }), done);
    const plan = plans.get(principal.accountId);
    const decision = plan !== undefined ? limiter.admit({ accountId: principal.accountId, plan }) : planOf(principal.accountId).then((fetched) => limiter.admit({ accountId: principal.accountId, plan: fetched }));
    settle(request, reply, decision, done);
  };
  if (!limiter.enabled) return [];
  return [
    { name: 'rate limits', at: 'authenticated', routes: (route) => !EXEMPT.test(route.url), hook: limit },
    { name: 'rate limits (refusals)', at: 'refused', hook: limit },
  ];
}

/** The operations that check a password under the login limit, which fails closed without Redis (rate-limiter.ts). */
const PASSWORD_CHECKS = new Set(['loginCustomer', 'replaceCustomer']);

/** Rate limits apply to every operation but health (decisions.md §7; the hidden /v2/openapi.json is limited too, said in the document's description). */
export const documentRateLimits: OperationDocumenter = (route, operation) => {
  if (!operation.response || EXEMPT.test(route.url)) return;
  operation.response = {
    ...(operation.response as Record<string, unknown>),
    429: { $ref: 'Error#', description: 'Over a rate limit: `Retry-After` says in how many seconds to retry; `RateLimit-Policy` and `RateLimit` (on every response) say which limit and what is left.' },
    ...(PASSWORD_CHECKS.has(String(operation.operationId)) && {
      503: { $ref: 'Error#', description: 'Several instances share attempt limits in Redis, and it does not answer: password checks pause rather than count on one instance. Nothing was tried; retry after `Retry-After` seconds.' },
    }),
  };
};
