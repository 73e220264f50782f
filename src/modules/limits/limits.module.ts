import type { FeatureModule } from '../../kernel/module.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { RateLimiter, type RateLimitSettings } from './rate-limiter.js';
import { RedisBucketStore } from './redis.store.js';

export { RateLimiter, type Caller, type Decision, type BruteForceKind, type RateLimitSettings } from './rate-limiter.js';

export interface LimitsOptions {
  settings: RateLimitSettings;
  environment: CheeseEnv;
  /** Shared buckets for several instances; this process's memory when undefined. */
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  warn: (message: string) => void;
}

export interface LimitsProvides {
  limiter: RateLimiter;
  /** Closes the Redis connection, if any. */
  close(): Promise<void>;
}

export type LimitsModule = FeatureModule<LimitsProvides>;

/** Rate limits (decisions.md §7): per plan and per minute, and brute-force limits on logins. */
export function createLimitsModule(options: LimitsOptions): LimitsModule {
  const shared = options.settings.enabled && options.redisUrl ? new RedisBucketStore(options.redisUrl, options.redisKeyPrefix) : undefined;
  return {
    name: 'limits',
    jobs: [],
    provides: { limiter: new RateLimiter(options.settings, options.environment === 'sandbox' ? 10 : 1, shared, options.warn), close: async () => shared?.close() },
  };
}
export { registerRateLimits } from './rate-limit.hooks.js';
