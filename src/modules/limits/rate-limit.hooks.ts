import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../../kernel/errors.js';
import type { Plan } from '../../kernel/plans.js';
import type { Caller, RateLimiter } from './rate-limiter.js';

/** Not limited: health checks from load balancers, and the documentation. */
const EXEMPT = /^\/(?:v2\/health|docs(?:\/.*)?|v2\/openapi\.json)$/;
const PLAN_CACHE_MS = 5000;
const MAX_CACHED_PLANS = 10_000;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Every request but the exempt ones draws from its caller's buckets after authentication: the
 * account's plan for a valid credential (plans cached 5 s), the client address otherwise.
 * `RateLimit-Policy` and `RateLimit` go on every such response; over the limit, 429 with
 * `Retry-After`. A request refused 401 draws from its address's bucket too (`rejected`), so
 * guessing credentials is limited like any anonymous traffic.
 */
export function registerRateLimits(app: FastifyInstance, options: { limiter: RateLimiter; planOf: (accountId: number) => Promise<Plan> }): { rejected(request: FastifyRequest, reply: FastifyReply): Promise<void> } {
  const { limiter } = options;
  const plans = new Map<number, { plan: Plan; until: number }>();
  const planOf = async (accountId: number): Promise<Plan> => {
    const cached = plans.get(accountId);
    if (cached && cached.until > Date.now()) return cached.plan;
    const plan = await options.planOf(accountId);
    if (plans.size >= MAX_CACHED_PLANS) plans.delete(plans.keys().next().value!);
    plans.set(accountId, { plan, until: Date.now() + PLAN_CACHE_MS });
    return plan;
  };
  const apply = async (request: FastifyRequest, reply: FastifyReply, caller: Caller) => {
    const decision = await limiter.admit(caller);
    reply.headers(decision.headers);
    if (!decision.allowed) {
      if (hasBody(request)) reply.header('connection', 'close');
      throw new TooManyRequestsError(`Rate limit reached: retry in ${Math.ceil(decision.retryAfterSeconds)} s (RateLimit-Policy says which limit).`, decision.retryAfterSeconds);
    }
  };
  if (limiter.enabled) {
    app.addHook('onRoute', (route) => {
      if (EXEMPT.test(route.url)) return;
      const limit = async (request: FastifyRequest, reply: FastifyReply) => {
        const principal = request.principal;
        await apply(request, reply, principal ? { accountId: principal.accountId, plan: await planOf(principal.accountId) } : { ip: request.ip });
      };
      const existing = route.onRequest;
      route.onRequest = (existing === undefined ? [limit] : [...(Array.isArray(existing) ? existing : [existing]), limit]) as typeof route.onRequest;
    });
  }
  return {
    rejected: async (request, reply) => {
      if (limiter.enabled) await apply(request, reply, { ip: request.ip });
    },
  };
}
