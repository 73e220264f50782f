import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';
import { systemClock } from '../../kernel/clock.js';

const NS_PER_S = 1e9;
/** How often the event loop is sampled, as prom-client does. */
const RESOLUTION_MS = 10;

/**
 * Event-loop delay, memory and CPU of this process. prom-client's collectDefaultMetrics is not
 * used: each call enables an event-loop monitor and a GC observer that nothing can stop, and
 * the tests build hundreds of apps in one process. These stop with the app (the returned
 * function).
 */
export function processMetrics(registry: Registry): () => void {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  // Node records the whole interval between two ticks of its timer, not the lateness: an idle
  // loop reads about RESOLUTION_MS. The lateness is what a request waits.
  const late = (ns: number) => Math.max(0, ns / NS_PER_S - RESOLUTION_MS / 1000);
  const delayGauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        // With no sample yet its figures mean nothing (a NaN mean, a huge minimum): report 0.
        this.set(delay.count > 0 ? late(read()) : 0);
      },
    });
  delayGauge('nodejs_eventloop_delay_p50_seconds', 'Median event-loop delay since the previous scrape.', () => delay.percentile(50));
  delayGauge('nodejs_eventloop_delay_p99_seconds', '99th percentile of the event-loop delay since the previous scrape.', () => delay.percentile(99));
  delayGauge('nodejs_eventloop_delay_mean_seconds', 'Mean event-loop delay since the previous scrape.', () => delay.mean);
  new Gauge({
    name: 'nodejs_eventloop_delay_max_seconds',
    help: 'Longest event-loop delay since the previous scrape (every request waiting then waited this long); the window restarts at each scrape.',
    registers: [registry],
    collect() {
      this.set(delay.count > 0 ? late(delay.max) : 0);
      // Read last: the four delay gauges are collected before this one (registration order).
      delay.reset();
    },
  });
  const memory = (name: string, help: string, read: (usage: NodeJS.MemoryUsage) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(process.memoryUsage()));
      },
    });
  memory('process_resident_memory_bytes', 'Resident set size: the memory the process holds in RAM.', (usage) => usage.rss);
  memory('nodejs_heap_size_total_bytes', 'V8 heap reserved.', (usage) => usage.heapTotal);
  memory('nodejs_heap_size_used_bytes', 'V8 heap in use.', (usage) => usage.heapUsed);
  memory('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript ones (buffers, SQLite statements).', (usage) => usage.external);
  // From zero: the whole process's time, not since this app was built.
  let cpuSeen = { user: 0, system: 0 };
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time the process has spent.',
    registers: [registry],
    collect() {
      const now = process.cpuUsage();
      this.inc((now.user - cpuSeen.user + now.system - cpuSeen.system) / 1e6);
      cpuSeen = now;
    },
  });
  // The process's real start: the system's clock, whatever clock the app was given.
  const started = systemClock.now() / 1000 - process.uptime();
  new Gauge({
    name: 'process_start_time_seconds',
    help: 'When the process started, in seconds since the Unix epoch.',
    registers: [registry],
    collect() {
      this.set(Math.round(started));
    },
  });
  return () => delay.disable();
}
