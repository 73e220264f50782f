import { Registry } from 'prom-client';
import type { Database } from '../../db/database.js';
import { latePorts, type FeatureModule, type Wired } from '../../kernel/module.js';
import { BacklogRepository } from './backlog.repository.js';
import { backlogMetrics } from './backlog.metrics.js';
import { databaseMetrics } from './database.metrics.js';
import { httpMetrics, type ResponseHook } from './http.metrics.js';
import { processMetrics } from './process.metrics.js';
import { limitMetrics, type LimitCounts } from './limit.metrics.js';
import { requestLogMetrics, type RequestLogCounts } from './request-log.metrics.js';
import { workMetrics, type AttemptResult, type JobRunObserver } from './work.metrics.js';
import type { BacklogSources } from './metrics.ports.js';
import { type Clock } from '../../kernel/clock.js';

export { serveMetrics, startMetricsServer, type MetricsOutcome, type MetricsServer } from './metrics.server.js';
export type { AttemptResult, JobRunObserver } from './work.metrics.js';
export type { BacklogSources } from './metrics.ports.js';

export interface MetricsOptions {
  database: Database;
  /** The outbox's reads behind the backlog gauges (its tables are its own). */
  backlog: Pick<BacklogSources, 'outbox'>;
  /** The limits module's live counters (Redis fallbacks, fail-closed refusals), read when scraped. */
  limitCounts?: Readonly<LimitCounts>;
  /** The request log's recorder counts (entries written, dropped, waiting), read when scraped. */
  requestLogCounts?: Readonly<RequestLogCounts>;
  clock?: Clock;
}

export interface MetricsProvides {
  /** This app's registry (never prom-client's global one: tests build many apps in one process). */
  registry: Registry;
  /** Every metric in the Prometheus text format, as `/metrics` answers. */
  text(): Promise<string>;
  contentType: string;
  /** Fastify `onResponse` hook counting every answer (app.ts registers it on the root). */
  onResponse: ResponseHook;
  /** For the job runner (src/jobs.ts startJobs). */
  jobs: JobRunObserver;
  /** For the webhook sender, after each attempt. */
  webhookAttempted(result: AttemptResult): void;
  /** Stops the event-loop monitor and the pool's wait timing. */
  close(): void;
}

/** Wired once webhooks exist (they are built after metrics: they count their attempts there). */
export interface MetricsPorts {
  /** Webhooks' reads behind the delivery backlog gauges. */
  deliveries: BacklogSources['deliveries'];
}

export type MetricsModule = FeatureModule<MetricsProvides> & Wired<MetricsPorts>;

/**
 * Prometheus metrics (docs/metrics.md): requests, the database pool, the outbox and webhook
 * backlog, webhook attempts, jobs, rate-limit refusals, the event loop and memory. Served
 * by startMetricsServer on a port of its own, never by the public app.
 */
export function createMetricsModule(options: MetricsOptions): MetricsModule {
  const registry = new Registry();
  const onResponse = httpMetrics(registry);
  const work = workMetrics(registry);
  const stopPool = databaseMetrics(registry, options.database);
  if (options.limitCounts) limitMetrics(registry, options.limitCounts);
  if (options.requestLogCounts) requestLogMetrics(registry, options.requestLogCounts);
  const late = latePorts<MetricsPorts>('metrics');
  const sources: BacklogSources = { outbox: options.backlog.outbox, deliveries: { backlog: (executor, now) => late.ports.deliveries.backlog(executor, now) } };
  backlogMetrics(registry, new BacklogRepository(options.database.db, options.database.dialect, sources), options.clock);
  const stopProcess = processMetrics(registry);
  return {
    name: 'metrics',
    wire: late.wire,
    jobs: [],
    provides: {
      registry,
      text: () => registry.metrics(),
      contentType: registry.contentType,
      onResponse,
      jobs: work.jobs,
      webhookAttempted: work.webhookAttempted,
      close() {
        stopPool();
        stopProcess();
      },
    },
  };
}
