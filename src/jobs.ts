import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from './config.js';
import type { Job } from './kernel/module.js';
import { noTracing, type Tracing } from './kernel/tracing.js';

/** Whether an instance of this `ROLE` runs the modules' jobs and workers: every role but `api`. */
export function runsBackgroundWork(role: AppConfig['role']): boolean {
  return role !== 'api';
}

/** Told of every run of every job (the metrics count runs, failures and durations). */
export interface JobObserver {
  ran(job: string, seconds: number, outcome: 'ok' | 'failed'): void;
}

export interface RunningJobs {
  /** No new run starts; resolves once the runs in progress have finished. */
  stop(): Promise<void>;
}

/**
 * Runs each job at start and then `everyMs` after its previous run finished, until stopped.
 * A chain of timeouts, never `setInterval`: a run slower than its period (a slow database)
 * delays the next one instead of piling a second run on top of it. A failure is logged and
 * the job tries again at its next turn.
 */
export function startJobs(jobs: readonly Job[], log: FastifyBaseLogger, observer?: JobObserver, tracer: Tracing = noTracing): RunningJobs {
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();

  const runOnce = async (job: Job) => {
    const started = performance.now();
    try {
      // Each run a trace of its own (tracing on), so its statements are grouped under the job.
      const count = await tracer.inRootSpan(`job ${job.name}`, { 'fromagerie.job': job.name }, async (span) => {
        const done = await job.run();
        span.set({ 'fromagerie.job.count': done });
        return done;
      });
      observer?.ran(job.name, (performance.now() - started) / 1000, 'ok');
      if (count > 0) log.info({ job: job.name, count }, 'job done');
    } catch (err) {
      observer?.ran(job.name, (performance.now() - started) / 1000, 'failed');
      log.error({ err, job: job.name }, 'job failed');
    }
  };

  const turn = (job: Job) => {
    if (stopped) return;
    const run = runOnce(job).finally(() => {
      running.delete(run);
      if (stopped) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        turn(job);
      }, job.everyMs);
      timer.unref();
      timers.add(timer);
    });
    running.add(run);
  };

  for (const job of jobs) turn(job);
  return {
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all(running);
    },
  };
}
