import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../../kernel/errors.js';
import type { Plan } from '../../kernel/plans.js';
import type { Decision, RateLimiter } from './rate-limiter.js';

/** Not limited: health checks from load balancers, and the documentation. */
const EXEMPT = /^\/(?:v2\/health|docs(?:\/.*)?|v2\/openapi\.json)$/;
const PLAN_CACHE_MS = 5000;
const MAX_CACHED_PLANS = 10_000;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Counts a request refused before its route ran: see `registerRateLimits`. */
export type RefusalCounter = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/**
 * Every request but the exempt ones draws from its caller's buckets after authentication: the
 * account's plan for a valid credential (plans cached 5 s), the client address otherwise.
 * `RateLimit-Policy` and `RateLimit` go on every such response; over the limit, 429 with
 * `Retry-After`. Refusals draw too, or probing would be free (issue 16 §6): `rejected` is the
 * auth plugin's to call on a request it turns away (401, 403, 400) and on one no route takes
 * (404, 405), with the principal set when the credential was valid, so that a 403 costs the
 * account what a 200 does and a guessed key costs its address. Undefined when limits are off.
 */
export function registerRateLimits(app: FastifyInstance, options: { limiter: RateLimiter; planOf: (accountId: number) => Promise<Plan> }): { rejected: RefusalCounter | undefined } {
  const { limiter } = options;
  const plans = new Map<number, { plan: Plan; until: number }>();
  const cachedPlan = (accountId: number): Plan | undefined => {
    const cached = plans.get(accountId);
    return cached && cached.until > Date.now() ? cached.plan : undefined;
  };
  const planOf = async (accountId: number): Promise<Plan> => {
    const plan = await options.planOf(accountId);
    if (plans.size >= MAX_CACHED_PLANS) plans.delete(plans.keys().next().value!);
    plans.set(accountId, { plan, until: Date.now() + PLAN_CACHE_MS });
    return plan;
  };
  const check = (request: FastifyRequest, reply: FastifyReply, decision: Decision) => {
    reply.headers(decision.headers);
    if (!decision.allowed) {
      if (hasBody(request)) reply.header('connection', 'close');
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
    const plan = cachedPlan(principal.accountId);
    const decision = plan !== undefined ? limiter.admit({ accountId: principal.accountId, plan }) : planOf(principal.accountId).then((fetched) => limiter.admit({ accountId: principal.accountId, plan: fetched }));
    settle(request, reply, decision, done);
  };
  if (!limiter.enabled) return { rejected: undefined };
  app.addHook('onRoute', (route) => {
    if (EXEMPT.test(route.url)) return;
    const existing = route.onRequest;
    route.onRequest = (existing === undefined ? [limit] : [...(Array.isArray(existing) ? existing : [existing]), limit]) as typeof route.onRequest;
  });
  return { rejected: limit };
}
