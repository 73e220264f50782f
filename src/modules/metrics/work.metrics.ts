import { Counter, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from './http.metrics.js';

/** Told of every run of every job: src/jobs.ts's JobObserver, which this module cannot import. */
export interface JobRunObserver {
  ran(job: string, seconds: number, outcome: 'ok' | 'failed'): void;
}

/** What the metrics need of one webhook attempt (the webhook sender's result). */
export interface AttemptResult {
  ok: boolean;
  /** Why it failed (`timeout`, `http_error`, `connection_refused`…); null when delivered. */
  errorClass: string | null;
  latencyMs: number;
}

/** Jobs run seconds to minutes apart and take milliseconds to seconds; a stuck one shows at 60 s. */
const JOB_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60];

/** Job runs and failures (from the job runner), webhook attempts by outcome (from the sender). */
export function workMetrics(registry: Registry): { jobs: JobRunObserver; webhookAttempted: (result: AttemptResult) => void } {
  const runs = new Counter({
    name: 'fromagerie_job_runs_total',
    help: 'Runs of each background job, by outcome: ok, or failed (it threw; logged, and tried again at its next turn).',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  const jobDuration = new Histogram({
    name: 'fromagerie_job_duration_seconds',
    help: 'How long each run of each background job took, failed runs included.',
    labelNames: ['job'] as const,
    buckets: JOB_BUCKETS,
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'fromagerie_webhook_attempts_total',
    help: 'Webhook attempts sent by this instance, by outcome: delivered (2xx), or the failure class (http_error, redirect, timeout, connection_refused, connection_reset, dns, tls, address_refused, network).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const attemptDuration = new Histogram({
    name: 'fromagerie_webhook_attempt_duration_seconds',
    help: 'How long each webhook attempt took, from sending to the answer read (or the failure); at most WEBHOOK_TIMEOUT_MS.',
    buckets: LATENCY_BUCKETS.concat([10, 30]),
    registers: [registry],
  });
  return {
    jobs: {
      ran(job, seconds, outcome) {
        runs.inc({ job, outcome });
        jobDuration.observe({ job }, seconds);
      },
    },
    webhookAttempted(result) {
      attempts.inc({ outcome: result.ok ? 'delivered' : (result.errorClass ?? 'network') });
      attemptDuration.observe(result.latencyMs / 1000);
    },
  };
}
