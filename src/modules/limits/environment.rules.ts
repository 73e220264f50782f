import type { CheeseEnv } from '../../kernel/environment.js';

/**
 * How much every rate limit figure is multiplied by in each environment (decisions.md §6-7),
 * the plans', the anonymous bucket's and the brute-force buckets' alike: the one place the
 * environments differ. `RATE_LIMIT_MULTIPLIER` defaults to its environment's.
 * - production: the product's figures;
 * - sandbox: ten times them, as documented for integrators' test runs;
 * - development (`npm start`): a hundred times, so that a newcomer walking through the README
 *   three times over (some 60 sign-ups, logins, token calls and image GETs from one address, a
 *   few hundred calls with a new key, in minutes) never meets a 429, while every answer still
 *   carries the RateLimit fields and a client stuck in a loop still meets one.
 */
export const ENVIRONMENT_MULTIPLIERS: Readonly<Record<CheeseEnv, number>> = { production: 1, sandbox: 10, development: 100 };

/**
 * The multiplier in force: the configured one (loadConfig always sets it). Settings made by
 * hand without one (the tests') mean their figures as written, sandbox's tenfold aside.
 */
export function multiplierOf(configured: number | undefined, environment: CheeseEnv): number {
  return configured ?? (environment === 'sandbox' ? ENVIRONMENT_MULTIPLIERS.sandbox : 1);
}
