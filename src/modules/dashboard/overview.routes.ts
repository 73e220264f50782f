import type { FastifyPluginAsync } from 'fastify';
import { systemClock } from '../../kernel/clock.js';
import { outcomeBadge } from './badges.js';
import { meter, stackedBarChart } from './charts.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { when } from './format.js';
import { hourRows, STATUS_CLASSES, trafficColumns, trafficSummary, trafficWindow } from './traffic.js';

const PLAN_NAMES = { free: 'Free', pro: 'Pro', enterprise: 'Enterprise' } as const;
const FAILURES_SHOWN = 5;

function windowName(seconds: number): string {
  return seconds === 3600 ? 'hour' : seconds === 60 ? 'minute' : seconds === 1 ? 'second' : `${seconds} s`;
}

const percent = (share: number) => `${(Math.floor(share * 1000) / 10).toFixed(1)}%`;

/**
 * The overview (issue 19 page 1, issue 31 page 4): environment, account and plan, rate-limit
 * use now, keys and webhooks at a glance; requests per hour by status class and how webhook
 * deliveries went over the last 24 hours (the app's clock), drawn as SVG on the server, each
 * picture with a one-line summary (its accessible name) and its numbers in a table.
 */
export function overviewRoutes(context: DashboardContext): FastifyPluginAsync {
  const clock = context.clock ?? systemClock;
  return async (scope) => {
    scope.get('/', async (request, reply) => {
      const session = sessionOf(request);
      const { principal } = session;
      const now = clock.now();
      const window = trafficWindow(now);
      const plan = await context.accounts.planOf(session.accountId);
      const [usage, keys, webhooks, hourly, stats, failures] = await Promise.all([
        context.usage(session.accountId, plan),
        context.apiKeys.list(session.accountId),
        context.webhooks.summary(principal),
        context.requestLogs.hourly(principal, window.from, window.to),
        context.deliveryInsights.stats(principal, window.from, window.to),
        context.deliveryInsights.recentFailures(principal, FAILURES_SHOWN),
      ]);
      const rows = hourRows(hourly, window.firstHour);
      const success = stats.attempts > 0 ? stats.delivered / stats.attempts : null;
      const deliverySummary =
        success === null
          ? 'Webhook deliveries, last 24 hours: no attempt was made.'
          : `Webhook deliveries, last 24 hours: ${percent(success)} of ${stats.attempts.toLocaleString('en-US')} attempts delivered; p95 latency ${Math.round(stats.p95LatencyMs ?? 0)} ms.`;
      return reply.view('overview', {
        ...layoutOf(context, request, reply, 'Overview', 'overview'),
        account: { username: session.username, role: session.role === 'admin' ? 'Staff' : 'Customer', plan: PLAN_NAMES[plan] },
        usage: usage.map((bucket) => ({ ...bucket, window: windowName(bucket.windowSeconds) })),
        activeKeys: keys.filter((key) => !key.rolledAt).length,
        webhooks,
        staff: session.role === 'admin',
        traffic: {
          summary: trafficSummary(rows),
          svg: stackedBarChart({ labelledBy: 'traffic-summary', series: STATUS_CLASSES, columns: trafficColumns(rows) }),
          series: STATUS_CLASSES.map((s) => ({ label: s.label, className: s.className })),
          rows: rows.map((row) => ({ ...row, when: when(row.iso, now) })),
        },
        deliveries: {
          summary: deliverySummary,
          svg: success === null ? null : meter('delivery-summary', success, 'chart-2xx'),
          attempts: stats.attempts,
          delivered: stats.delivered,
          failed: stats.attempts - stats.delivered,
          rate: success === null ? '—' : percent(success),
          p95: stats.p95LatencyMs === null ? '—' : `${Math.round(stats.p95LatencyMs)} ms`,
        },
        failures: failures.map((f) => ({
          ...f,
          badge: f.outcome === 'dead_lettered' ? outcomeBadge('Dead-lettered', 'dead') : outcomeBadge('Failed', 'failed'),
          answer: f.statusCode === null ? 'No answer' : String(f.statusCode),
          at: when(f.createdAt, now),
        })),
      });
    });
  };
}
