import { Compile } from 'typebox/compile';
import type { Clock } from './kernel/clock.js';
import type { Tracing } from './kernel/tracing.js';
import type { RateLimitSettings } from './modules/limits/limits.module.js';
import type { WebhookSettings } from './modules/webhooks/webhooks.module.js';
import { ENVIRONMENTS, type CheeseEnv } from './kernel/environment.js';
import { environmentSchema, reasonsToRefuse, settle, ConfigError, type ConfigOf } from './config/variable.js';
import { SETTINGS } from './config/variables.js';

export { ENVIRONMENTS, type CheeseEnv, ConfigError };

/**
 * Everything the app needs, already validated: its shape is SETTINGS' (config/variables.ts),
 * where each variable is declared once. Tests build one by hand.
 */
export type AppConfig = ConfigOf<typeof SETTINGS> & {
  /** The time every module reads (src/kernel/clock.ts); the system's unless a test gives its own. Not an environment variable. */
  clock?: Clock;
  /** Where spans go (src/kernel/tracing.ts): built from `tracing` by the server at start; none when absent. Not an environment variable. */
  tracer?: Tracing;
  /** How long an account's plan is trusted by the rate limiter before it is read again (5000 unless a test shortens it). Not an environment variable. */
  planCacheMs?: number;
  /** How often the event log's watcher reads the head while requests are held (500 ms); tests shorten it. Not an environment variable. */
  eventsWatchIntervalMs?: number;
  /**
   * scrypt's N for new password hashes (2^15). Test apps lower it to 2^10, so their thousands of
   * sign-ups and logins cost about 1 ms each instead of 70 (each hash keeps its N: verifying is
   * unaffected). Not an environment variable: a deployment cannot weaken it.
   */
  passwordCost?: number;
  /**
   * Where the request log's batches are written: on a worker thread of their own (`thread`, the
   * default: docs/performance.md, "Request log cost"), or on the event loop (`event-loop`: test
   * apps, which would otherwise each start a thread). Not an environment variable.
   */
  requestLogWriter?: 'thread' | 'event-loop';
};

// The modules' own settings types must be exactly what the variables make.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _settingsMatch: [Same<AppConfig['rateLimits'], RateLimitSettings>, Same<AppConfig['webhooks'], WebhookSettings>] = [true, true];

const EnvSchema = environmentSchema(SETTINGS);
const envValidator = Compile(EnvSchema);

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const relevant: Record<string, string> = Object.fromEntries(
    Object.keys(EnvSchema.properties)
      .filter((key) => source[key] !== undefined && source[key] !== '')
      .map((key) => [key, source[key]!]),
  );
  if (!envValidator.Check(relevant)) {
    const errors = [...envValidator.Errors(relevant)];
    const problems = errors.map((e) => `${e.instancePath.slice(1) || 'env'}: ${e.message}`);
    // The rest is still checked, so one start names every variable to fix (a malformed one is not also called missing).
    const malformed = new Set(errors.map((e) => e.instancePath.slice(1)));
    const wellFormed = Object.fromEntries(Object.entries(relevant).filter(([key]) => !malformed.has(key)));
    // Judged without building: a refused start writes no default (DATA_DIR/.app-secret).
    let more: string[];
    try {
      more = reasonsToRefuse(SETTINGS, wellFormed as Record<string, string>);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      more = error.message.replace(/^invalid configuration: /, '').split('; ');
    }
    problems.push(...more.filter((reason) => ![...malformed].some((name) => reason.startsWith(name))));
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return settle(SETTINGS, relevant);
}
