import type { BucketSpec } from './bucket.rules.js';

export type BruteForceKind = 'login' | 'signup' | 'token';

/** Burst, then tokens per hour. */
type Figure = readonly [burst: number, perHour: number];

/**
 * The brute-force buckets (decisions: issue 16 §6). `address`: everything one address tries;
 * `pair`: one address against one username; `name`: one username (or OAuth client id) from
 * the addresses it is not known at. A pair as wide as the address would add nothing, so the
 * token endpoint has none; sign-ups name no account.
 */
export const BRUTE_FORCE_FIGURES: Record<BruteForceKind, { address: Figure; pair?: Figure; name?: Figure }> = {
  login: { address: [30, 120], pair: [5, 12], name: [10, 20] },
  signup: { address: [10, 30] },
  token: { address: [60, 1200], name: [60, 1200] },
};

/** An address stays known for a name this long after its last success there... */
export const KNOWN_FOR_MS = 30 * 86_400_000;
/** ...and a name keeps its most recent addresses only, so that the bound on guesses holds. */
export const KNOWN_PER_NAME = 10;

export function isKnown(lastSuccessAt: number | undefined, now: number): boolean {
  return lastSuccessAt !== undefined && now - lastSuccessAt <= KNOWN_FOR_MS;
}

/** Usernames are unique whatever their case; a space never occurs in an address, so `pair` keys cannot collide. */
export function knownKey(kind: BruteForceKind, name: string): string {
  return `${kind}:known:${name.toLowerCase()}`;
}

const hourly = (name: string, [burst, perHour]: Figure, m: number): BucketSpec => ({ name, capacity: burst * m, refillPerSecond: (perHour * m) / 3600, quota: perHour * m, windowSeconds: 3600 });

/**
 * The buckets one attempt draws from. An address where the name succeeded lately (`known`)
 * skips the name's bucket: strangers spraying guesses at a username empty that bucket, and
 * the owner, at an address of theirs, is not held back by it. Every address still has its own
 * buckets, so guessing from the owner's address stays slow too.
 */
export function attemptBuckets(kind: BruteForceKind, ip: string, name: string | undefined, known: boolean, multiplier: number): { keys: string[]; specs: BucketSpec[] } {
  const figures = BRUTE_FORCE_FIGURES[kind];
  const keys = [`${kind}:ip:${ip}`];
  const specs = [hourly(`${kind}-per-address`, figures.address, multiplier)];
  if (name === undefined) return { keys, specs };
  const lower = name.toLowerCase();
  const subject = kind === 'token' ? 'client' : 'username';
  if (figures.pair) {
    keys.push(`${kind}:pair:${ip} ${lower}`);
    specs.push(hourly(`${kind}-per-address-and-${subject}`, figures.pair, multiplier));
  }
  if (figures.name && !known) {
    keys.push(`${kind}:name:${lower}`);
    specs.push(hourly(`${kind}-per-${subject}`, figures.name, multiplier));
  }
  return { keys, specs };
}

/**
 * Most guesses an hour against one name once every bucket is empty: strangers share the
 * name's bucket, and each known address has its pair (or, without one, its address) bucket.
 */
export function guessesPerHourBound(kind: 'login' | 'token'): number {
  const { address, pair, name } = BRUTE_FORCE_FIGURES[kind];
  return name![1] + KNOWN_PER_NAME * (pair ?? address)[1];
}
