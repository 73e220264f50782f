import type { FastifyBaseLogger } from 'fastify';
import type { Job } from './kernel/module.js';

/**
 * Runs each job at start and then every `everyMs`, until the returned stop function is called.
 * A failure is logged and the job tries again at its next tick.
 */
export function startJobs(jobs: readonly Job[], log: FastifyBaseLogger): () => void {
  const timers = jobs.map((job) => {
    const tick = () =>
      job
        .run()
        .then((count) => count > 0 && log.info({ job: job.name, count }, 'job done'))
        .catch((err: unknown) => log.error({ err, job: job.name }, 'job failed'));
    void tick();
    const timer = setInterval(tick, job.everyMs);
    timer.unref();
    return timer;
  });
  return () => timers.forEach((timer) => clearInterval(timer));
}
