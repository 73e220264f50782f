/** Webhook delivery settings (decisions.md §8), from the WEBHOOK_* environment variables. */
export interface WebhookSettings {
  /** Seconds after the event (or its replay) at which attempt 1, 2, … is due; the length bounds the attempts. */
  retryScheduleS: number[];
  /** A receiver that has not answered within this has failed. */
  timeoutMs: number;
  /** Attempts and finished deliveries are pruned after this many days. */
  retentionDays: number;
  /** Attempts in flight at once on one instance, towards one endpoint, and for one account (dispatch.rules.ts). */
  concurrency: number;
  endpointConcurrency: number;
  accountConcurrency: number;
  /** The safety-net poll (commits wake the dispatcher at once). */
  pollMs: number;
}
