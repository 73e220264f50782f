/** A token bucket: `capacity` tokens at most, refilled at `refillPerSecond`. */
export interface BucketSpec {
  /** Names the policy in the RateLimit fields (`"free"`, `"per-minute"`, `"login-ip"`). */
  name: string;
  capacity: number;
  refillPerSecond: number;
  /** The window the policy is stated over, for `RateLimit-Policy` (`q` tokens per `w` seconds). */
  quota: number;
  windowSeconds: number;
}

export interface BucketState {
  tokens: number;
  /** Epoch milliseconds of `tokens`. */
  at: number;
}

/** Tokens after refilling up to `now`; a bucket never seen is full. */
export function refilled(state: BucketState | undefined, spec: BucketSpec, now: number): number {
  if (!state) return spec.capacity;
  return Math.min(spec.capacity, state.tokens + (Math.max(0, now - state.at) / 1000) * spec.refillPerSecond);
}

/**
 * One request against several buckets at once: allowed only if every bucket has a token, and
 * then each loses one; refused, none does. What the memory store does, and the Redis script
 * (TAKE_ALL in redis.store.ts) does the same arithmetic. A `cost` of -1 gives a token back
 * (never past capacity): a login that proved the password was not a guess.
 */
export function takeAll(states: readonly (BucketState | undefined)[], specs: readonly BucketSpec[], now: number, cost = 1): { allowed: boolean; tokens: number[] } {
  const tokens = specs.map((spec, i) => refilled(states[i], spec, now));
  const allowed = tokens.every((t) => t >= cost);
  return { allowed, tokens: allowed ? tokens.map((t, i) => Math.min(specs[i]!.capacity, t - cost)) : tokens };
}

/** Seconds until a bucket holding `tokens` has one whole token again (0 when it has). */
export function secondsUntilToken(tokens: number, spec: BucketSpec): number {
  return tokens >= 1 ? 0 : (1 - tokens) / spec.refillPerSecond;
}

/** Seconds until a bucket holding `tokens` is full again. */
export function secondsUntilFull(tokens: number, spec: BucketSpec): number {
  return Math.max(0, (spec.capacity - tokens) / spec.refillPerSecond);
}
