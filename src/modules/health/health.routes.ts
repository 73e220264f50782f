import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Database } from '../../db/database.js';

const Check = Type.Object({
  status: Type.Enum(['up', 'down']),
  latencyMs: Type.Optional(Type.Number()),
  error: Type.Optional(Type.String()),
});

const Health = Type.Object({
  status: Type.Enum(['ok', 'unavailable'], { description: '`unavailable` (with 503) when a dependency is down.' }),
  version: Type.String(),
  environment: Type.String(),
  uptimeSeconds: Type.Number(),
  checks: Type.Object({ database: Check }),
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ database: Database; version: string; environment: string }> = async (app, opts) => {
  const startedAt = Date.now();
  app.get(
    '/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        operationId: 'getHealth',
        summary: 'Service health for uptime monitoring (2.1.0)',
        description: 'Public and never cached. 200 with `status: ok` when every dependency answers; 503 with `status: unavailable` naming the one that does not (the reason goes to the logs only).',
        response: { 200: Health, 503: Health },
      },
    },
    async (request, reply) => {
      const started = performance.now();
      let database: Type.Static<typeof Check>;
      try {
        await opts.database.ping();
        database = { status: 'up', latencyMs: Math.round((performance.now() - started) * 100) / 100 };
      } catch (err) {
        // The reason goes to our logs; the public body only says the dependency is down.
        request.log.error({ err }, 'health check: database unreachable');
        database = { status: 'down', error: 'database unreachable' };
      }
      const ok = database.status === 'up';
      reply.header('cache-control', 'no-store');
      return reply.code(ok ? 200 : 503).send({
        status: ok ? 'ok' : 'unavailable',
        version: opts.version,
        environment: opts.environment,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
        checks: { database },
      });
    },
  );
};
