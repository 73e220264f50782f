import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

/** ioredis loads when Redis is configured, not at start: an instance without REDIS_URL never pays for it. */
const loadRedis = (): typeof Redis => (createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }).Redis;
import { withinDeadline } from '../../kernel/deadline.js';
import type { BucketSpec } from './bucket.rules.js';
import type { BucketStore, Taken } from './bucket.store.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { isKnown, KNOWN_FOR_MS, KNOWN_PER_NAME } from './brute-force.rules.js';
import { noTracing, type Tracing } from '../../kernel/tracing.js';

/**
 * takeAll (bucket.rules.ts) as one Lua script, so a check and its update are one atomic step
 * however many instances share the buckets (never read-then-write). Redis's clock is the one
 * clock. Tokens are returned as strings: Redis would truncate Lua numbers to integers. The
 * last argument is the cost: 1, or -1 to give a token back.
 */
const TAKE_ALL = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens = {}
local allowed = 1
local cost = tonumber(ARGV[#KEYS * 2 + 1])
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[i * 2 - 1])
  local rate = tonumber(ARGV[i * 2])
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local held = tonumber(state[1])
  if held == nil then
    held = capacity
  else
    held = math.min(capacity, held + math.max(0, now - tonumber(state[2])) / 1000 * rate)
  end
  tokens[i] = held
  if held < cost then allowed = 0 end
end
local out = { allowed }
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[i * 2 - 1])
  local rate = tonumber(ARGV[i * 2])
  if allowed == 1 then tokens[i] = math.min(capacity, tokens[i] - cost) end
  redis.call('HSET', KEYS[i], 'tokens', tostring(tokens[i]), 'at', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil(capacity / rate * 1000) + 1000)
  out[#out + 1] = tostring(tokens[i])
end
return out
`;

type TakeAllCommand = (numberOfKeys: number, ...args: (string | number)[]) => Promise<(number | string)[]>;

/** How long a request waits for Redis before its limits are counted on this instance. */
export const REDIS_DEADLINE_MS = 250;
/**
 * ioredis's own timeout only clears commands still queued for a Redis that never answers: the
 * decision is taken at REDIS_DEADLINE_MS by withinDeadline, which a busy event loop cannot fool.
 */
const COMMAND_BACKSTOP_MS = 2000;

/** Buckets in Redis: every call bounded (connect 1 s, answer 250 ms, no queue while down). */
export class RedisBucketStore implements BucketStore {
  readonly #redis: Redis & { takeAll: TakeAllCommand };

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly clock: Clock = systemClock,
    private readonly tracer: Tracing = noTracing,
  ) {
    const redis = new (loadRedis())(url, {
      connectTimeout: 1000,
      commandTimeout: COMMAND_BACKSTOP_MS,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: (attempt) => Math.min(attempt * 250, 2000),
    });
    // Reconnection errors are expected while Redis is down; the caller reports them once in a while.
    redis.on('error', () => undefined);
    redis.defineCommand('takeAll', { lua: TAKE_ALL });
    this.#redis = redis as Redis & { takeAll: TakeAllCommand };
  }

  /**
   * Resolves once connected, or after `timeoutMs` whatever the state: commands are not queued
   * while connecting (they fail open to local buckets), so an instance waits for its first
   * connection before serving rather than start on per-instance budgets.
   */
  ready(timeoutMs = 1000): Promise<void> {
    if (this.#redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#redis.once('ready', done);
    });
  }

  async take(keys: readonly string[], specs: readonly BucketSpec[], cost = 1): Promise<Taken> {
    const args = specs.flatMap((spec) => [spec.capacity, spec.refillPerSecond]);
    const [allowed, ...tokens] = await this.#traced('EVALSHA', () => withinDeadline(this.#redis.takeAll(keys.length, ...keys.map((key) => `${this.prefix}rl:${key}`), ...args, cost), REDIS_DEADLINE_MS));
    return { allowed: Number(allowed) === 1, tokens: tokens.map(Number) };
  }

  /** A sorted set per name: address → time of its last success (this instance's clock; a month is not sensitive to skew). */
  async knows(key: string, member: string): Promise<boolean> {
    const score = await this.#traced('ZSCORE', () => withinDeadline(this.#redis.zscore(`${this.prefix}rl:${key}`, member), REDIS_DEADLINE_MS));
    return isKnown(score === null ? undefined : Number(score), this.clock.now());
  }

  async remember(key: string, member: string): Promise<void> {
    const now = this.clock.now();
    const set = `${this.prefix}rl:${key}`;
    await this.#traced('MULTI', () => withinDeadline(this.#redis.multi().zadd(set, now, member).zremrangebyscore(set, '-inf', now - KNOWN_FOR_MS).zremrangebyrank(set, 0, -(KNOWN_PER_NAME + 1)).pexpire(set, KNOWN_FOR_MS).exec(), REDIS_DEADLINE_MS));
  }

  /** A CLIENT span per command: its name only, never the keys (they hold addresses and account ids). */
  #traced<T>(command: string, work: () => Promise<T>): Promise<T> {
    return this.tracer.inSpan(command, { 'db.system.name': 'redis', 'db.operation.name': command }, work, 'client');
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
