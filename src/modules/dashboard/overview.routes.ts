import type { FastifyPluginAsync } from 'fastify';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';

const PLAN_NAMES = { free: 'Free', pro: 'Pro', enterprise: 'Enterprise' } as const;

function windowName(seconds: number): string {
  return seconds === 3600 ? 'hour' : seconds === 60 ? 'minute' : seconds === 1 ? 'second' : `${seconds} s`;
}

/** The overview (issue 19, page 1): environment, account and plan, rate-limit use now, keys and webhooks at a glance. */
export function overviewRoutes(context: DashboardContext): FastifyPluginAsync {
  return async (scope) => {
    scope.get('/', async (request, reply) => {
      const session = sessionOf(request);
      const plan = await context.accounts.planOf(session.accountId);
      const [usage, keys, webhooks] = await Promise.all([
        context.usage(session.accountId, plan),
        context.apiKeys.list(session.accountId),
        context.webhooks.summary(session.principal),
      ]);
      return reply.view('overview', {
        ...layoutOf(context, request, reply, 'Overview', 'overview'),
        account: { username: session.username, role: session.role === 'admin' ? 'Staff' : 'Customer', plan: PLAN_NAMES[plan] },
        usage: usage.map((bucket) => ({ ...bucket, window: windowName(bucket.windowSeconds) })),
        activeKeys: keys.filter((key) => !key.rolledAt).length,
        webhooks,
        staff: session.role === 'admin',
      });
    });
  };
}
