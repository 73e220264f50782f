import type { FastifyInstance } from 'fastify';

const HOUR_MS = 60 * 60 * 1000;

/**
 * Periodic work of one instance: seasonal windows opening, API keys about to expire. Each job is safe to run on every instance at once (the
 * database decides who does the work), so no leader election is needed.
 */
export function startBackgroundJobs(app: FastifyInstance): void {
  const announceSeasons = () =>
    app.services.seasons
      .announceOpenings()
      .then((count) => count > 0 && app.log.info({ count }, 'announced seasonal windows opening'))
      .catch((err: unknown) => app.log.error({ err }, 'seasonal announcement failed'));
  const announceExpiringKeys = () =>
    app.services.apiKeys
      .announceExpiring()
      .then((count) => count > 0 && app.log.info({ count }, 'announced API keys expiring within 7 days'))
      .catch((err: unknown) => app.log.error({ err }, 'API key expiry announcement failed'));
  const hourly = () => {
    void announceSeasons();
    void announceExpiringKeys();
  };
  const timer = setInterval(hourly, HOUR_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
  hourly();
}
