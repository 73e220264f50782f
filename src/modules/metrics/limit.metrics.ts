import { Counter, type Registry } from 'prom-client';

/** The limits module's counters (its `provides.counts`), which grow in place. */
export interface LimitCounts {
  fallbacks: number;
  failClosed: number;
}

/**
 * What Redis's failures cost the rate limits, read from the limits module when scraped. Its
 * refusal count is not repeated here: `fromagerie_rate_limit_refusals_total` counts the 429
 * answers, by route.
 */
/** A counter whose value lives in another module's counts, read when scraped. */
export function readCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

export function limitMetrics(registry: Registry, counts: Readonly<LimitCounts>): void {
  readCounter(registry, 'fromagerie_rate_limit_fallbacks_total', 'Rate-limit decisions made on this instance\'s own buckets because Redis failed (or failed within the last 5 s): while it grows, each instance counts alone.', () => counts.fallbacks);
  readCounter(registry, 'fromagerie_rate_limit_fail_closed_total', 'Login and token attempts refused (503) because Redis did not answer: those limits never fall back to one instance\'s count.', () => counts.failClosed);
}
