import type { FastifyInstance } from 'fastify';
import type { ModuleStage, Next, RequestHook, RouteFilter, SendHook } from '../kernel/request-stage.js';
import { authStages, type AuthOptions } from './auth.js';
import { corsPreflight, registerCors } from './cors.js';
import { compressLast } from './compression.js';
import { conditionalGet } from './etag.js';
import { registerErrorHandling } from './error-handler.js';
import { trackRouteMethods } from './method-router.js';
import { negotiation } from './negotiation.js';
import { readCacheStages, type ResponseCache } from './read-cache.js';
import type { ProxyTrust } from './trusted-proxies.js';
import { bodyBounds, capConnectionsPerClient, connectionGuards, requestGuards, unreadBody } from './request-guards.js';
import { registerValidation, requestChecks } from './validation.js';
import { registerBodyParsers } from './body-parsers.js';

/**
 * The request pipeline: every concern a request meets, in the order it meets them. This list
 * is the only place that decides what runs and when; each concern lives in its own file and
 * hands its stages here.
 *
 * Before any request (the connection): CONNECT refused (405), at most N connections per client
 * (503), `Expect: 100-continue` answered only when the body is read, any other Expect 417,
 * unparseable HTTP 400/408/431 (error-handler.ts).
 *
 * | #  | phase         | stage                                  | routes                         |
 * |----|---------------|----------------------------------------|--------------------------------|
 * | 1  | onRequest     | request id (X-Request-Id)              | every request                  |
 * | 2  | onRequest     | request guards (Host, URL, codings)    | every request                  |
 * | 3  | onRequest     | CORS (preflight, then @fastify/cors)   | every request                  |
 * | 4  | onRequest     | unrouted requests identified (404/405) | no route: module `refused`     |
 * | 5  | onRequest     | authentication and authorization       | `config.auth` not public       |
 * | 6  | onRequest     | module stages `authenticated`          | as each says (rate limits)     |
 * | 7  | preParsing    | body bounds (413 before reading)       | every request                  |
 * |    |               | body parsing (body-parsers.ts)         |                                |
 * | 8  | preValidation | negotiation (406)                      | every /v2 request              |
 * | 9  | preValidation | request checks (text, numbers, query)  | every request                  |
 * |    |               | schema validation (validation.ts)      |                                |
 * | 10 | preHandler    | read cache lookup                      | `config.readCache`             |
 * | 11 | preHandler    | module stages `handler`                | as each says (Idempotency-Key) |
 * |    |               | the route's own hooks, then handler    |                                |
 * | 12 | onSend        | ETag, If-None-Match (304)              | every request                  |
 * | 13 | onSend        | unread body: drained, or closed        | every request                  |
 * | 14 | onSend        | module stages `answered`               | every request (request log)    |
 * | 15 | onSend        | read cache store                       | `config.readCache`             |
 * | 16 | onSend        | module stages `sent`                   | as each says (Idempotency-Key) |
 * | 17 | onSend        | compression (br, gzip; the ETag stage  | every route, after its own     |
 * |    |               | chose the coding: compression.ts)      | onSend hooks                   |
 *
 * Tracing on (OTEL_EXPORTER_OTLP_ENDPOINT), the request's span starts with its request id, before
 * row 1, and is current through every row (tracing.ts, registered by app.ts ahead of this list).
 *
 * Errors anywhere: one error handler, the Error shape (error-handler.ts). Refusals at 4 and 5
 * go to the module stages `refused` (rate limits count them). Fastify runs a phase's hooks for
 * every request before a route's own, so within a phase the stages for every request come
 * first (`use` refuses another order); a route's own hooks (ownership checks) run after the
 * pipeline's of the same phase.
 */

type Phase = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'onSend';
type PreParsingHook = (request: Parameters<RequestHook>[0], reply: Parameters<RequestHook>[1], payload: unknown, next: (error: Error | null, payload?: unknown) => void) => void;

/** One concern at one phase; `routes` limits it to the routes it concerns (all requests when absent). */
export type Stage =
  | { name: string; phase: 'onRequest' | 'preValidation' | 'preHandler'; routes?: RouteFilter; hook: RequestHook }
  | { name: string; phase: 'preParsing'; routes?: RouteFilter; hook: PreParsingHook }
  | { name: string; phase: 'onSend'; routes?: RouteFilter; hook: SendHook };

export interface PipelineOptions {
  auth: Omit<AuthOptions, 'refused'>;
  cors: { origins: string[] };
  readCache: ResponseCache;
  maxConnectionsPerClient: number;
  /** TRUST_PROXY's peers: their connections carry many clients, so the per-client cap leaves them alone. */
  trustedProxy?: ProxyTrust | false;
  /** Every module's stages, in module order. */
  moduleStages: ModuleStage[];
}

export async function registerPipeline(app: FastifyInstance, options: PipelineOptions): Promise<void> {
  const modules = <At extends ModuleStage['at']>(at: At) => options.moduleStages.filter((stage): stage is Extract<ModuleStage, { at: At }> => stage.at === at);
  app.decorateRequest('principal', null);
  app.decorateRequest('representation', 'application/json');
  registerBodyParsers(app);
  registerValidation(app);
  const refused = chain(modules('refused').map((stage) => stage.hook));
  const allowedMethods = trackRouteMethods(app);
  connectionGuards(app);
  capConnectionsPerClient(app, options.maxConnectionsPerClient, options.trustedProxy || undefined);
  registerErrorHandling(app, allowedMethods);
  const auth = authStages({ ...options.auth, refused });
  const cache = readCacheStages(options.readCache);

  use(app, [
    { name: 'request id', phase: 'onRequest', hook: (request, reply, next) => (reply.header('x-request-id', request.id), next()) },
    { name: 'request guards', phase: 'onRequest', hook: requestGuards },
    { name: 'CORS preflight', phase: 'onRequest', hook: corsPreflight(options.cors.origins, allowedMethods) },
  ]);
  // @fastify/cors adds its own onRequest hook for every request: here, after the preflight answer.
  await registerCors(app, options.cors);
  use(app, [
    ...(refused ? [{ name: 'unrouted requests identified', phase: 'onRequest' as const, hook: auth.identifyUnrouted }] : []),
    { name: 'authentication', phase: 'onRequest', routes: auth.applies, hook: auth.authenticate },
    ...modules('authenticated').map(({ name, routes, hook }) => ({ name, phase: 'onRequest' as const, routes, hook })),
    { name: 'body bounds', phase: 'preParsing', hook: bodyBounds },
    { name: 'negotiation', phase: 'preValidation', hook: negotiation },
    { name: 'request checks', phase: 'preValidation', hook: requestChecks },
    ...(cache ? [{ name: 'read cache lookup', phase: 'preHandler' as const, routes: cache.applies, hook: cache.lookup }] : []),
    ...modules('handler').map(({ name, routes, hook }) => ({ name, phase: 'preHandler' as const, routes, hook })),
    { name: 'ETag', phase: 'onSend', hook: conditionalGet },
    { name: 'unread body', phase: 'onSend', hook: unreadBody },
    ...modules('answered').map(({ name, hook }) => ({ name, phase: 'onSend' as const, hook })),
    ...(cache ? [{ name: 'read cache store', phase: 'onSend' as const, routes: cache.applies, hook: cache.store }] : []),
    ...modules('sent').map(({ name, routes, hook }) => ({ name, phase: 'onSend' as const, routes, hook })),
  ]);
  // Stage 17, after every route's own onSend hooks too: what the stages above keep is identity bytes.
  app.addHook('onRoute', compressLast);
}

/**
 * Registers stages in the order given: a stage for every request as an app hook, a stage for
 * some routes on each route it concerns, before the route's own hooks of that phase.
 */
export function use(app: FastifyInstance, stages: Stage[]): void {
  const scoped: Stage[] = [];
  for (const stage of stages) {
    if (stage.routes) {
      scoped.push(stage);
      continue;
    }
    // Fastify runs app hooks before route hooks: a later stage for every request would run first.
    if (scoped.some((earlier) => earlier.phase === stage.phase)) throw new Error(`pipeline: "${stage.name}" runs for every request, so it cannot follow a route stage of ${stage.phase}`);
    app.addHook(stage.phase as 'onRequest', stage.hook as RequestHook);
  }
  if (scoped.length === 0) return;
  app.addHook('onRoute', (route) => {
    const routeHooks = route as unknown as Record<Phase, unknown>;
    const placed = pipelineHooks.get(route) ?? {};
    for (const stage of scoped) {
      if (!stage.routes!(route)) continue;
      const own = routeHooks[stage.phase];
      const list = own === undefined ? [] : Array.isArray(own) ? [...(own as unknown[])] : [own];
      // After the pipeline's earlier stages of this phase, before the route's own hooks.
      const at = placed[stage.phase] ?? 0;
      list.splice(at, 0, stage.hook);
      placed[stage.phase] = at + 1;
      routeHooks[stage.phase] = list;
    }
    pipelineHooks.set(route, placed);
  });
}

/** How many hooks of each phase the pipeline put at the front of a route's own. */
const pipelineHooks = new WeakMap<object, Partial<Record<Phase, number>>>();

/** The `refused` stages as one, each after the previous (undefined when there is none). */
function chain(hooks: RequestHook[]): RequestHook | undefined {
  if (hooks.length === 0) return undefined;
  return hooks.reduceRight<RequestHook>((after, hook) => (request, reply, next: Next) => hook(request, reply, (error) => (error ? next(error) : after(request, reply, next))), (_request, _reply, next) => next());
}

