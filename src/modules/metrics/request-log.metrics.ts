import { Gauge, type Registry } from 'prom-client';
import { readCounter } from './limit.metrics.js';

/** The request log's recorder counts (its `provides.counts`), which grow in place. */
export interface RequestLogCounts {
  recorded: number;
  dropped: number;
  queued: number;
}

/** What the request log kept and lost: recording never fails a request, so losses show here. */
export function requestLogMetrics(registry: Registry, counts: Readonly<RequestLogCounts>): void {
  readCounter(registry, 'fromagerie_request_log_recorded_total', 'Request log entries written by this instance.', () => counts.recorded);
  readCounter(registry, 'fromagerie_request_log_dropped_total', 'Request log entries lost on this instance: the queue was full (10,000 entries waiting), or the database refused their batch. The requests themselves were answered.', () => counts.dropped);
  new Gauge({
    name: 'fromagerie_request_log_queued',
    help: 'Request log entries waiting to be written on this instance.',
    registers: [registry],
    collect() {
      this.set(counts.queued);
    },
  });
}
