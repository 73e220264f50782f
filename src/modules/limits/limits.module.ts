import { latePorts, type FeatureModule, type Wired } from '../../kernel/module.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { multiplierOf } from './environment.rules.js';
import { RateLimiter, type RateLimitSettings } from './rate-limiter.js';
import { RedisBucketStore } from './redis.store.js';
import { documentRateLimits, rateLimitStages } from './rate-limit.hooks.js';
import type { Plan } from '../../kernel/plans.js';
import type { Clock } from '../../kernel/clock.js';
import type { Tracing } from '../../kernel/tracing.js';
import type { LimitCounts } from './bucket.store.js';

export { ENVIRONMENT_MULTIPLIERS } from './environment.rules.js';
export type { LimitCounts } from './bucket.store.js';
export { RateLimiter, type BucketUsage, type Caller, type Decision, type BruteForceKind, type RateLimitSettings } from './rate-limiter.js';

export interface LimitsOptions {
  /** Spans for Redis commands (docs/operations.md, "Traces"); none when absent. */
  tracer?: Tracing | undefined;
  settings: RateLimitSettings;
  environment: CheeseEnv;
  /** Shared buckets for several instances; this process's memory when undefined. */
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  warn: (message: string) => void;
  /** How long an account's plan is trusted (rate-limit.hooks.ts's PLAN_CACHE_MS unless given). */
  planCacheMs?: number;
  clock?: Clock;
}

export interface LimitsProvides {
  limiter: RateLimiter;
  /**
   * Live counters since start (for /metrics): `fallbacks`, decisions made on this instance's
   * buckets because Redis failed; `failClosed`, login and token attempts answered 503 because
   * Redis did not answer; `refusals`, requests answered 429 over any limit. Read the fields
   * each time (`provides.counts.fallbacks`): they grow in place and are never reset.
   */
  counts: Readonly<LimitCounts>;
  /** Resolves once the shared buckets are reachable (at most a second): see RedisBucketStore.ready. */
  ready(): Promise<void>;
  /** Closes the Redis connection, if any. */
  close(): Promise<void>;
}

/** Wired once identity exists (it is built after limits: it takes their brute-force guard). */
export interface LimitsPorts {
  /** The account's plan (identity's), asked when a plan is not cached. */
  planOf: (accountId: number) => Promise<Plan>;
}

export type LimitsModule = FeatureModule<LimitsProvides> & Wired<LimitsPorts>;

/** Rate limits (decisions.md §7): per plan and per minute, and brute-force limits on logins. */
export function createLimitsModule(options: LimitsOptions): LimitsModule {
  const shared = options.settings.enabled && options.redisUrl ? new RedisBucketStore(options.redisUrl, options.redisKeyPrefix, options.clock, options.tracer) : undefined;
  const limiter = new RateLimiter(options.settings, multiplierOf(options.settings.multiplier, options.environment), shared, options.warn, options.clock);
  const late = latePorts<LimitsPorts>('limits');
  return {
    wire: late.wire,
    name: 'limits',
    jobs: [],
    // After authentication on every route but health and the docs, and on every refusal.
    stages: rateLimitStages({ limiter, planOf: (accountId) => late.ports.planOf(accountId), planCacheMs: options.planCacheMs, clock: options.clock }),
    documents: documentRateLimits,
    provides: { limiter, counts: limiter.counts, ready: async () => shared?.ready(), close: async () => shared?.close() },
  };
}
