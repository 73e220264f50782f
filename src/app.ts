import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppConfig } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { authPlugin, PrincipalResolver } from './http/auth.js';
import { ErrorSchema } from './http/common.schema.js';
import { registerConditionalGet } from './http/etag.js';
import { registerCors } from './http/cors.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/error-handler.js';
import { trackRouteMethods } from './http/method-router.js';
import { registerOpenApi } from './http/openapi.js';
import { requestIdFor } from './http/request-id.js';
import { serializeRequest } from './http/log-redaction.js';
import { readCachePlugin, ResponseCache } from './http/read-cache.js';
import { registerValidation } from './http/validation.js';
import { registerBodyParsers } from './http/body-parsers.js';
import { registerNegotiation } from './http/negotiation.js';
import { capConnectionsPerClient, refuseConnect, registerRequestGuards } from './http/request-guards.js';
import { createModules, credentialResolversOf, type Modules } from './modules.js';
import { registerRateLimits } from './modules/limits/limits.module.js';
import { registerIdempotency } from './modules/idempotency/idempotency.module.js';

declare module 'fastify' {
  interface FastifyInstance {
    modules: Modules;
    readCache: ResponseCache;
    database: Database;
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
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: config.logLevel,
            redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'], censor: '[redacted]' },
            serializers: { req: serializeRequest },
            ...(options.logStream ? { stream: options.logStream } : {}),
          },
    genReqId: requestIdFor,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    return503OnClosing: true,
    // A body stalled after one byte is answered 408 after requestTimeoutMs, not held forever.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, requireHostHeader: false, connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs) },
    forceCloseConnections: 'idle',
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const modules = createModules(config, database, (message, details) => app.log.warn(details, message));
  app.decorate('modules', modules);
  app.decorate('database', database);
  if (ownsDatabase) app.addHook('onClose', () => database.close());

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  registerRequestGuards(app);
  refuseConnect(app);
  capConnectionsPerClient(app, config.maxConnectionsPerClient);
  registerBodyParsers(app);
  registerValidation(app);
  registerNegotiation(app);
  app.addSchema(ErrorSchema);
  const allowedMethods = trackRouteMethods(app);
  registerErrorHandling(app, allowedMethods);
  registerConditionalGet(app);
  // The docs page and same-origin pages need no CORS; these browser origins may call too.
  await registerCors(app, { origins: [config.publicUrl, ...config.corsOrigins], allowedMethods });
  await registerOpenApi(app, modules.webhooks.provides.openapi());
  // Before the auth plugin: its hook then runs after authentication on every route (rate-limit.hooks.ts).
  const rateLimits = registerRateLimits(app, { limiter: modules.limits.provides.limiter, planOf: (accountId) => modules.identity.provides.accounts.planOf(accountId) });
  app.addHook('onClose', () => modules.limits.provides.close());
  registerIdempotency(app, { keys: modules.idempotency.provides.keys, ttlMs: config.idempotencyTtlSeconds * 1000, leaseMs: config.requestTimeoutMs });
  await app.register(authPlugin, { resolver: new PrincipalResolver(credentialResolversOf(modules)), onRejected: rateLimits.rejected });
  const readCache = new ResponseCache(config.readCacheTtlMs, config.readCacheMaxBytes);
  app.decorate('readCache', readCache);
  modules.catalogue.provides.changes.onChange(() => readCache.invalidate());
  await app.register(readCachePlugin, { cache: readCache });

  await app.register(
    async (v2) => {
      for (const module of Object.values(modules)) if (module.routes) await v2.register(module.routes);
      v2.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: '/v2' },
  );
  for (const module of Object.values(modules)) if (module.rootRoutes) await app.register(module.rootRoutes);
  return app;
}
