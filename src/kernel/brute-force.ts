/** What a route reports once it knows whether the password (or client secret) was right. */
export interface GuardedAttempt {
  /** Right: the attempt was no guess, so it costs nothing, and its address becomes known for that name. */
  succeeded(): Promise<void>;
}

/**
 * Slows password guessing and mass sign-ups (decisions.md §7, issue 16 §6): counted per client
 * address, per address and username, and per username (or OAuth client id) from addresses
 * where it has not succeeded lately; throws TooManyRequestsError (429) when over, and
 * ServiceUnavailableError (503, Retry-After) for `login` and `token` when the shared buckets
 * (Redis) are configured but do not answer: those fail closed, the rest fail open to the
 * instance's own buckets. Implemented by the limits module; a no-op when RATE_LIMITS=off.
 */
export type BruteForceGuard = (kind: 'login' | 'signup' | 'token', ip: string, name?: string) => Promise<GuardedAttempt>;

export const NO_GUARD: BruteForceGuard = async () => ({ succeeded: async () => undefined });
