import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Database } from '../../db/database.js';
import type { Readiness } from './readiness.js';
import { type Clock } from '../../kernel/clock.js';

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

const Probe = Type.Object({
  status: Type.Enum(['ok', 'unavailable']),
  reason: Type.Optional(Type.Enum(['draining', 'database unreachable', 'schema behind'], { description: 'Why the instance is not ready (with 503 only).' })),
});

/** The paths a `ROLE=worker` instance serves, and the ones a load balancer or orchestrator probes. */
export const PROBE_PATHS = ['/v2/health/live', '/v2/health/ready'] as const;

export const healthRoutes: FastifyPluginAsyncTypebox<{ database: Database; version: string; environment: string; readiness: Readiness; clock: Clock }> = async (app, opts) => {
  const startedAt = opts.clock.now();
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
        uptimeSeconds: Math.round((opts.clock.now() - startedAt) / 1000),
        checks: { database },
      });
    },
  );

  app.get(
    '/health/live',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        operationId: 'getHealthLive',
        summary: 'Liveness: the process answers',
        description: 'Public, never cached, never rate-limited. 200 whenever the process answers HTTP, draining included; no dependency is checked. For an orchestrator\'s liveness probe: restart the instance only when this fails.',
        response: { 200: Probe },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return reply.send({ status: 'ok' });
    },
  );

  app.get(
    '/health/ready',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        operationId: 'getHealthReady',
        summary: 'Readiness: send this instance traffic',
        description:
          'Public, never cached, never rate-limited. 503 while the instance drains (after SIGTERM), when the database does not answer within 200 ms, or when its schema is behind the code\'s migrations; Redis being down does not make an instance unready (limits then count per instance). For the load balancer\'s active checks.',
        response: { 200: Probe, 503: Probe },
      },
    },
    async (request, reply) => {
      const reason = await opts.readiness.check();
      reply.header('cache-control', 'no-store');
      if (reason && reason !== 'draining') request.log.warn({ reason }, 'readiness check failed');
      return reason ? reply.code(503).send({ status: 'unavailable', reason }) : reply.send({ status: 'ok' });
    },
  );
};
