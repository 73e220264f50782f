import type { FastifyPluginAsync } from 'fastify';
import type { ModuleStage } from './request-stage.js';

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
 * jobs, the stages it adds to the request pipeline, and what it offers other modules
 * (`provides`), the only way they may reach it.
 */
export interface FeatureModule<Provides> {
  name: string;
  routes?: FastifyPluginAsync;
  /** Routes at the service root, outside /v2 (protocol endpoints such as OAuth's). */
  rootRoutes?: FastifyPluginAsync;
  jobs: Job[];
  workers?: Worker[];
  /** Stages the module adds to every request's pipeline (src/http/pipeline.ts), in order. */
  stages?: ModuleStage[];
  /** What the module adds to the OpenAPI operations it concerns (the headers and answers of its stages). */
  documents?: OperationDocumenter;
  provides: Provides;
}

/** A route as the OpenAPI document sees it. */
export interface DocumentedRoute {
  url: string;
  config?: Record<string, unknown>;
}

/** Adds to one operation of the OpenAPI document (its `headers`, `response`) what a module knows of it. */
export type OperationDocumenter = (route: DocumentedRoute, operation: Record<string, unknown>) => void;
