import type { FastifyPluginAsync } from 'fastify';

/**
 * Periodic work a module contributes. `run` must be safe on every instance at once (the
 * database decides who does each piece of work), so no leader election is needed. It
 * returns how many items it handled, for the log.
 */
export interface Job {
  name: string;
  everyMs: number;
  run(now?: Date): Promise<number>;
}

/**
 * A long-running loop a module contributes (the webhook dispatcher): started once the server
 * listens, stopped before the database closes. Like a job, safe on every instance at once.
 */
export interface Worker {
  name: string;
  start(): void;
  stop(): Promise<void>;
}

/**
 * What a feature module's factory returns: its HTTP routes (registered under /v2), its
 * jobs, and what it offers other modules (`provides`), the only way they may reach it.
 */
export interface FeatureModule<Provides> {
  name: string;
  routes?: FastifyPluginAsync;
  /** Routes at the service root, outside /v2 (protocol endpoints such as OAuth's). */
  rootRoutes?: FastifyPluginAsync;
  jobs: Job[];
  workers?: Worker[];
  provides: Provides;
}
