/**
 * Slows password guessing and mass sign-ups (decisions.md §7): counted per client address and
 * per username (or OAuth client id); throws TooManyRequestsError (429) when over. Implemented
 * by the limits module; a no-op when RATE_LIMITS=off.
 */
export type BruteForceGuard = (kind: 'login' | 'signup' | 'token', ip: string, name?: string) => Promise<void>;

export const NO_GUARD: BruteForceGuard = async () => undefined;
