import type { GuardedAttempt } from '../../kernel/brute-force.js';
import { ServiceUnavailableError, TooManyRequestsError } from '../../kernel/errors.js';
import type { Plan } from '../../kernel/plans.js';
import type { Clock } from '../../kernel/clock.js';
import { secondsUntilFull, secondsUntilToken, type BucketSpec } from './bucket.rules.js';
import { SharedOrLocalStore, SharedStoreDown, type BucketStore, type LimitCounts, type Taken } from './bucket.store.js';
import { attemptBuckets, knownKey, type BruteForceKind } from './brute-force.rules.js';

/** Figures from configuration (decisions.md §7): per plan, and the per-minute ceiling. */
export interface RateLimitSettings {
  enabled: boolean;
  free: { perHour: number; burst: number };
  pro: { perHour: number; burst: number };
  enterprise: { perSecond: number; burst: number };
  /** Authenticated principals on Free and Pro: the 2.4.0 note's requests per minute. */
  perMinute: number;
  /**
   * Every figure here and the brute-force buckets' are multiplied by this: by default the
   * environment's (environment.rules.ts), 100 in development, 10 in sandbox, 1 in production.
   */
  multiplier?: number;
}

export type { BruteForceKind } from './brute-force.rules.js';

/** Who is counted: an account on its plan, or an address (anonymous callers get Free). */
export type Caller = { accountId: number; plan: Plan } | { ip: string };

export interface Decision {
  allowed: boolean;
  /** IETF draft-ietf-httpapi-ratelimit-headers fields, set on every response. */
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

/** One bucket as the dashboard shows it: what is left of its burst, and its quota per window. */
export interface BucketUsage {
  name: string;
  remaining: number;
  capacity: number;
  quota: number;
  windowSeconds: number;
  fullInSeconds: number;
}

const hourly = (name: string, perHour: number, burst: number): BucketSpec => ({ name, capacity: burst, refillPerSecond: perHour / 3600, quota: perHour, windowSeconds: 3600 });

const NOTHING_TO_REPORT: GuardedAttempt = { succeeded: async () => undefined };

/** The attempts that are refused rather than counted per instance while Redis is away (issue 20). */
const FAIL_CLOSED: ReadonlySet<BruteForceKind> = new Set(['login', 'token']);
/** Seconds a refused login or token request is told to wait: time for Redis's reconnection (backing off up to 2 s) to be tried twice. */
const RETRY_WHILE_SHARED_DOWN_S = 5;

function limitsUnavailable(kind: BruteForceKind): ServiceUnavailableError {
  const what = kind === 'token' ? 'Token requests' : 'Sign-ins';
  const error = new ServiceUnavailableError(`${what} are paused: the service cannot check attempt limits right now. Nothing was tried; try again in ${RETRY_WHILE_SHARED_DOWN_S} s.`);
  error.headers['retry-after'] = String(RETRY_WHILE_SHARED_DOWN_S);
  return error;
}

/**
 * Token buckets by plan and per minute, checked as one step in the store. The store is Redis
 * when configured (one budget for every instance) and this process otherwise, or when Redis
 * fails (SharedOrLocalStore).
 */
export class RateLimiter {
  readonly #store: SharedOrLocalStore;
  /** Each plan's buckets, and their RateLimit-Policy field, made once. */
  readonly #plans: Record<'anonymous' | Plan, BucketSpec[]>;
  readonly #policies: Map<readonly BucketSpec[], string>;

  constructor(
    private readonly settings: RateLimitSettings,
    /** Every figure is multiplied by this: the environment's (environment.rules.ts) unless configured. */
    private readonly multiplier: number,
    shared: BucketStore | undefined,
    warn: (message: string) => void,
    clock?: Clock,
  ) {
    this.#store = new SharedOrLocalStore(shared, warn, clock);
    const m = multiplier;
    const perMinute = settings.perMinute * m;
    const minute: BucketSpec = { name: 'per-minute', capacity: perMinute, refillPerSecond: perMinute / 60, quota: perMinute, windowSeconds: 60 };
    const { perSecond, burst } = settings.enterprise;
    this.#plans = {
      anonymous: [hourly('anonymous', settings.free.perHour * m, settings.free.burst * m)],
      free: [hourly('free', settings.free.perHour * m, settings.free.burst * m), minute],
      pro: [hourly('pro', settings.pro.perHour * m, settings.pro.burst * m), minute],
      enterprise: [{ name: 'enterprise', capacity: burst * m, refillPerSecond: perSecond * m, quota: perSecond * m, windowSeconds: 1 }],
    };
    this.#policies = new Map(Object.values(this.#plans).map((specs) => [specs, policyOf(specs)]));
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** The buckets a caller draws from. */
  specsFor(caller: Caller): { keys: string[]; specs: BucketSpec[] } {
    if ('ip' in caller) return { keys: [`ip:${caller.ip}`], specs: this.#plans.anonymous };
    const id = `acct:${caller.accountId}`;
    return caller.plan === 'enterprise' ? { keys: [id], specs: this.#plans.enterprise } : { keys: [id, `${id}:minute`], specs: this.#plans[caller.plan] };
  }

  /** A promise only when the buckets are in Redis: the local path is synchronous, as it is on every request. */
  admit(caller: Caller): Decision | Promise<Decision> {
    const { keys, specs } = this.specsFor(caller);
    return this.#decide(keys, specs);
  }

  /** What is left of each of the caller's buckets now, spending nothing (the dashboard's overview). */
  async usage(caller: Caller): Promise<BucketUsage[]> {
    const { keys, specs } = this.specsFor(caller);
    const { tokens } = await this.#store.take(keys, specs, 0);
    return specs.map((spec, i) => ({
      name: spec.name,
      remaining: Math.max(0, Math.floor(tokens[i]!)),
      capacity: spec.capacity,
      quota: spec.quota,
      windowSeconds: spec.windowSeconds,
      fullInSeconds: Math.ceil(secondsUntilFull(tokens[i]!, spec)),
    }));
  }

  /**
   * Login, sign-up and the token endpoint (brute-force.rules.ts): throws 429 when over. Taken
   * before the password is checked, so parallel guesses cannot overdraw; a success gives its
   * tokens back and makes its address known for that name. With Redis configured and not
   * answering, a login or token attempt is refused (503, `Retry-After`) rather than counted on
   * this instance: each instance would otherwise be a fresh budget of guesses. Sign-ups fail
   * open as every other limit does. Giving back after a success never refuses: the password
   * was right.
   */
  async bruteForce(kind: BruteForceKind, ip: string, name?: string): Promise<GuardedAttempt> {
    if (!this.settings.enabled) return NOTHING_TO_REPORT;
    const { keys, specs, decision } = await this.#attempt(kind, ip, name).catch((error: unknown) => {
      throw error instanceof SharedStoreDown ? limitsUnavailable(kind) : error;
    });
    if (!decision.allowed) throw new TooManyRequestsError(`Too many ${kind === 'signup' ? 'sign-ups' : `${kind} attempts`}: try again in ${Math.ceil(decision.retryAfterSeconds)} s.`, decision.retryAfterSeconds);
    return {
      succeeded: async () => {
        await this.#store.take(keys, specs, -1);
        if (name !== undefined) await this.#store.remember(knownKey(kind, name), ip);
      },
    };
  }

  /** The attempt's buckets and whether it may go ahead: Redis's answer only, for the kinds that fail closed. */
  async #attempt(kind: BruteForceKind, ip: string, name: string | undefined): Promise<{ keys: string[]; specs: BucketSpec[]; decision: Decision }> {
    const strict = FAIL_CLOSED.has(kind);
    const knownAs = name === undefined ? undefined : knownKey(kind, name);
    const known = knownAs !== undefined && (await (strict ? this.#store.knowsShared(knownAs, ip) : this.#store.knows(knownAs, ip)));
    const { keys, specs } = attemptBuckets(kind, ip, name, known, this.multiplier);
    const decision = strict ? this.#decision(specs, await this.#store.takeShared(keys, specs)) : await this.#decide(keys, specs);
    return { keys, specs, decision };
  }

  /** Live counts of Redis fallbacks, fail-closed refusals and 429s (LimitCounts). */
  get counts(): Readonly<LimitCounts> {
    return this.#store.counts;
  }

  #decide(keys: string[], specs: BucketSpec[]): Decision | Promise<Decision> {
    const taken = this.#store.take(keys, specs);
    return taken instanceof Promise ? taken.then((result) => this.#decision(specs, result)) : this.#decision(specs, taken);
  }

  #decision(specs: BucketSpec[], { allowed, tokens }: Taken): Decision {
    if (!allowed) this.#store.counts.refusals++;
    // The field reports the bucket closest to refusing.
    let tightest = 0;
    tokens.forEach((t, i) => {
      if (t / specs[i]!.capacity < tokens[tightest]! / specs[tightest]!.capacity) tightest = i;
    });
    const spec = specs[tightest]!;
    const retryAfterSeconds = Math.max(...tokens.map((t, i) => secondsUntilToken(t, specs[i]!)));
    return {
      allowed,
      retryAfterSeconds,
      headers: {
        // The plans' are made once; brute-force buckets are made per call.
        'ratelimit-policy': this.#policies.get(specs) ?? policyOf(specs),
        ratelimit: `"${spec.name}";r=${Math.max(0, Math.floor(tokens[tightest]!))};t=${Math.ceil(allowed ? secondsUntilFull(tokens[tightest]!, spec) : retryAfterSeconds)}`,
      },
    };
  }
}

function policyOf(specs: readonly BucketSpec[]): string {
  return specs.map((s) => `"${s.name}";q=${round(s.quota)};w=${s.windowSeconds}`).join(', ');
}

function round(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}
