import type { Exchange, FaultWindow } from './client.js';

/** The metered client's operation name in the record. */
export const METERED_OP = 'metered';
/**
 * After Redis answers again an instance keeps its own buckets for up to 5 s (it asks Redis again
 * only then: src/modules/limits/bucket.store.ts), and a call to Redis times out after 250 ms.
 */
export const LOCAL_LIMITS_GRACE_MS = 6_000;
/** `r` is a floor of the tokens left: one for the rounding, one for the refill measured by our clock, not the store's. */
const SLACK = 2;

interface Reading {
  t0: number;
  t1: number;
  server: string;
  remaining: number;
  /** It took a token (answered, not refused). */
  took: boolean;
}

/**
 * Rate limits held across instances while Redis was up (issue 20): one client of a metered
 * account asks one request at a time, faster than its plan refills, through HAProxy's round
 * robin. Each answer says what is left of the account's bucket (`RateLimit: "free";r=…`). With
 * one budget shared by every instance, between any two answers i < j the budget can only have
 * fallen by the requests that took a token in between, less the refill over the time that
 * separates them: r_j <= r_i - taken(i, j] + refill × (t1_j - t0_i). Instances that each keep
 * their own bucket break it within a few requests (each sees a third of the traffic). Answers in
 * a window where the instances count alone (Redis paused, plus LOCAL_LIMITS_GRACE_MS) are left
 * out, and so is what they took: counting fewer tokens only loosens the bound.
 */
export function checkSharedLimits(record: readonly Exchange[], localWindows: readonly FaultWindow[], startedAt: number): string[] {
  const local = (e: Exchange) => localWindows.some((w) => e.t1 >= w.start && e.t0 <= w.end + LOCAL_LIMITS_GRACE_MS);
  const metered = record.filter((e) => e.op === METERED_OP).sort((a, b) => a.t0 - b.t0);
  const refill = refillPerSecond(metered.find((e) => e.rateLimitPolicy)?.rateLimitPolicy);
  if (refill === undefined) return [`rate limits: the metered client got no answer with a "free" RateLimit-Policy (${metered.length} requests)`];
  const readings: Reading[] = [];
  for (const e of metered) {
    const remaining = remainingOf(e.rateLimit);
    if (remaining === undefined || local(e)) continue;
    readings.push({ t0: e.t0, t1: e.t1, server: e.server ?? '?', remaining, took: e.status !== 429 });
  }
  const servers = new Set(readings.map((r) => r.server));
  if (readings.length < 20 || servers.size < 2) return [`rate limits: too few metered answers to check (${readings.length} from ${[...servers].join(', ') || 'no instance'})`];
  let worst: { excess: number; text: string } | undefined;
  for (let i = 0; i < readings.length; i++) {
    let taken = 0;
    for (let j = i + 1; j < readings.length; j++) {
      const a = readings[i]!;
      const b = readings[j]!;
      if (b.took) taken++;
      const bound = a.remaining - taken + (refill * (b.t1 - a.t0)) / 1000 + SLACK;
      const excess = b.remaining - bound;
      if (excess > 0 && (!worst || excess > worst.excess)) {
        worst = {
          excess,
          text: `between +${a.t0 - startedAt} ms (r=${a.remaining} via ${a.server}) and +${b.t1 - startedAt} ms (r=${b.remaining} via ${b.server}) ${taken} requests took a token and the bucket refills ${refill.toFixed(2)}/s, yet ${Math.ceil(excess)} more were left than one shared budget allows`,
        };
      }
    }
  }
  return worst ? [`rate limits did not hold across instances while Redis was up: ${worst.text}`] : [];
}

/** `"free";r=12;t=3` → 12 (only the account's plan bucket, never the per-minute ceiling). */
function remainingOf(field: string | undefined): number | undefined {
  const match = field && /^"free";r=(\d+);/.exec(field);
  return match ? Number(match[1]) : undefined;
}

/** `"free";q=10000;w=3600, "per-minute";…` → tokens a second of the "free" bucket. */
function refillPerSecond(policy: string | undefined): number | undefined {
  const match = policy && /"free";q=([\d.]+);w=(\d+)/.exec(policy);
  return match ? Number(match[1]) / Number(match[2]) : undefined;
}
