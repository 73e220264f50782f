import { systemClock } from './kernel/clock.js';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppConfig } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { openChangeBroadcast } from './db/change-broadcast.js';
import { PrincipalResolver } from './http/auth.js';
import { ErrorSchema } from './http/common.schema.js';
import { clientErrorHandler, frameworkErrorHandler } from './http/error-handler.js';
import { registerOpenApi, serveDocument } from './http/openapi.js';
import { requestIdsFrom } from './http/request-id.js';
import { serializeRequest } from './http/log-redaction.js';
import { ResponseCache } from './http/read-cache.js';
import { lazySerializers } from './http/lazy-compile.js';
import { registerPipeline } from './http/pipeline.js';
import { proxyTrust } from './http/trusted-proxies.js';
import { registerTracing, tracedRequestIds } from './http/tracing.js';
import { noTracing } from './kernel/tracing.js';
import { createModules, credentialResolversOf, type Modules } from './modules.js';

declare module 'fastify' {
  interface FastifyInstance {
    modules: Modules;
    readCache: ResponseCache;
    database: Database;
    /** The Prometheus registry's text and more (docs/metrics.md); served on METRICS_PORT by src/server.ts. */
    metrics: Modules['metrics']['provides'];
  }
}

export interface BuildOptions {
  /** An already-open database (the server, tests); otherwise opened from the config and closed with the app. */
  database?: Database;
  logger?: boolean;
  /** Where log lines go (tests read them); stdout by default. */
  logStream?: { write(line: string): void };
}

export async function buildApp(config: AppConfig, options: BuildOptions = {}): Promise<FastifyInstance> {
  const ownsDatabase = !options.database;
  const database = options.database ?? openDatabase(config);
  // Who may say who the client is (X-Forwarded-For): request.ip and the per-client connection cap both ask.
  const trustedProxy = proxyTrust(config.trustProxy);
  const tracer = config.tracer ?? noTracing;
  const traceIds = tracer.enabled ? () => tracer.traceIds() : undefined;
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: config.logLevel,
            redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'], censor: '[redacted]' },
            serializers: { req: serializeRequest },
            // Tracing on: every line written inside a span names it (docs/operations.md, "Traces").
            ...(traceIds ? { mixin: () => logTraceIds(traceIds()) } : {}),
            ...(options.logStream ? { stream: options.logStream } : {}),
          },
    genReqId: tracedRequestIds(tracer, requestIdsFrom(config.clock ?? systemClock)),
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: trustedProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    return503OnClosing: true,
    // A body stalled after one byte is answered 408 after requestTimeoutMs, not held forever.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, requireHostHeader: false, connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs) },
    forceCloseConnections: 'idle',
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    schemaController: { compilersFactory: lazySerializers },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // First of every hook: the request's span is current for all that follows.
  registerTracing(app, tracer);
  // Fastify runs onClose hooks in reverse: the database, registered first, closes last.
  if (ownsDatabase) app.addHook('onClose', () => database.close());
  const warn = (message: string, details: Record<string, unknown>) => app.log.warn(details, message);
  // Catalogue changes and credential revocations reach every instance's caches within a second (issue 20).
  const broadcast = openChangeBroadcast(database, { log: warn });
  app.addHook('onClose', () => broadcast.close());
  const modules = createModules(config, database, warn, broadcast);
  app.decorate('modules', modules);
  app.decorate('database', database);
  app.decorate('metrics', modules.metrics.provides);
  // Every answer counted, unrouted ones (404) included: a root hook, before any route exists.
  app.addHook('onResponse', modules.metrics.provides.onResponse);
  // Every /v2 request of an account, once answered (queued: writing never delays the answer).
  app.addHook('onResponse', (request, reply, done) => {
    modules.requestLog.provides.onResponse(request, reply);
    done();
  });
  // After the server stopped taking requests: what is queued is written before the database closes.
  app.addHook('onClose', () => modules.requestLog.provides.close());
  app.addHook('onClose', async () => modules.metrics.provides.close());
  // A stock change still inside its coalescing window is told before the broadcast closes.
  app.addHook('onClose', () => modules.catalogue.provides.changes.close());

  // Every request's path through the service, in order: src/http/pipeline.ts.
  const readCache = new ResponseCache(config.readCacheTtlMs, config.readCacheMaxBytes, config.clock);
  app.decorate('readCache', readCache);
  modules.catalogue.provides.changes.onChange(() => readCache.invalidate());
  await registerPipeline(app, {
    auth: { resolver: new PrincipalResolver(credentialResolversOf(modules)) },
    // The docs page and same-origin pages need no CORS; these browser origins may call too.
    cors: { origins: [config.publicUrl, ...config.corsOrigins] },
    readCache,
    maxConnectionsPerClient: config.maxConnectionsPerClient,
    trustedProxy,
    moduleStages: Object.values(modules).flatMap((module) => module.stages ?? []),
  });
  app.addSchema(ErrorSchema);
  await registerOpenApi(app, modules.webhooks.provides.openapi(), Object.values(modules).flatMap((module) => (module.documents ? [module.documents] : [])));
  app.addHook('onClose', () => modules.limits.provides.close());
  // Idempotency-Keys of requests that never finished are freed for their retries (src/server.ts does it before its database closes).
  app.addHook('onClose', () => modules.idempotency.provides.leases.close());

  await app.register(
    async (v2) => {
      for (const module of Object.values(modules)) if (module.routes) await v2.register(module.routes);
      v2.get('/openapi.json', { config: { auth: 'public', compressOnce: true }, schema: { hide: true } }, serveDocument(app));
    },
    { prefix: '/v2' },
  );
  for (const module of Object.values(modules)) if (module.rootRoutes) await app.register(module.rootRoutes);
  // Shared rate limits from the first request, not per-instance ones while Redis connects.
  await modules.limits.provides.ready();
  return app;
}

function logTraceIds(ids: { traceId: string; spanId: string } | undefined): Record<string, string> {
  return ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}
