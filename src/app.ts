import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppConfig } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { authPlugin } from './http/auth.js';
import { ErrorSchema } from './http/common.schema.js';
import { registerConditionalGet } from './http/etag.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/error-handler.js';
import { trackRouteMethods } from './http/method-router.js';
import { registerOpenApi } from './http/openapi.js';
import { API_VERSION } from './version.js';
import { requestIdFor } from './http/request-id.js';
import { readCachePlugin, ResponseCache } from './http/read-cache.js';
import { registerValidation } from './http/validation.js';
import { createServices, type Services } from './services.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { apiKeyRoutes } from './modules/identity/api-key.routes.js';
import { catalogueRoutes } from './modules/catalogue/catalogue.routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    database: Database;
  }
}

export interface BuildOptions {
  /** An already-open database (tests, CLI); otherwise opened from the config and closed with the app. */
  database?: Database;
  logger?: boolean;
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
          },
    genReqId: requestIdFor,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const services = createServices(config, database);
  app.decorate('services', services);
  app.decorate('database', database);
  if (ownsDatabase) app.addHook('onClose', () => database.close());

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerValidation(app);
  app.addSchema(ErrorSchema);
  registerErrorHandling(app, trackRouteMethods(app));
  registerConditionalGet(app);
  await registerOpenApi(app, config.publicUrl);
  await app.register(authPlugin, { resolver: services.principals });
  const readCache = new ResponseCache(config.readCacheTtlMs);
  services.catalogueChanges.onChange(() => readCache.invalidate());
  await app.register(readCachePlugin, { cache: readCache });

  await app.register(
    async (v2) => {
      await v2.register(healthRoutes, { database, version: API_VERSION, environment: config.env });
      await v2.register(apiKeyRoutes, { apiKeys: services.apiKeys });
      await v2.register(catalogueRoutes, { services, config });
      v2.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: '/v2' },
  );
  return app;
}
