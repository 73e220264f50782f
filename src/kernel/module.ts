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

/**
 * The second phase of a module's life (create, wire, start): ports it needs from modules built
 * after it, handed over once by the composition root (src/modules.ts) when every module exists.
 * A port read before then is a wiring mistake, said at once; so is wiring twice.
 */
export interface Wired<Ports> {
  wire(ports: Ports): void;
}

export function latePorts<Ports>(module: string): Wired<Ports> & { readonly ports: Ports } {
  let wired: Ports | undefined;
  return {
    wire(ports) {
      if (wired) throw new Error(`${module}: wired twice`);
      wired = ports;
    },
    get ports(): Ports {
      if (!wired) throw new Error(`${module}: a port was used before src/modules.ts wired the module`);
      return wired;
    },
  };
}
