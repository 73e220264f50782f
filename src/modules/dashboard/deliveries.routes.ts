import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ValidationFailedError } from '../../kernel/errors.js';
import { EVENT_TYPES } from '../outbox/outbox.module.js';
import type { AttemptView } from '../webhooks/webhooks.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { when } from './format.js';
import { dayStart, OUTCOME_FILTERS, PAGE_SIZE, presentAttempt, queryOf } from './webhook-views.js';

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Cursor = Type.Optional(Type.String({ maxLength: 200 }));

const DELIVERY_NOW: Record<AttemptView['deliveryState'], string> = { pending: 'Pending: an attempt is to come', delivered: 'Delivered', dead: 'Dead-lettered: replay it to send it again' };

/** The filters of the attempt log, all in the URL (a GET form): links, back and forward keep them. */
const LogQuery = Type.Object({
  outcome: Type.Optional(Type.Array(Type.Enum(['delivered', 'failed', 'pending', 'dead_lettered']), { maxItems: 4 })),
  eventType: Type.Optional(Type.String({ maxLength: 100 })),
  from: Type.Optional(Type.String({ maxLength: 20 })),
  to: Type.Optional(Type.String({ maxLength: 20 })),
  next: Cursor,
  prev: Cursor,
  replayed: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
});

/**
 * A webhook's deliveries (issue 19, page 4): the attempt log filtered by outcome (several at
 * once; Pending is the failed attempts still waiting for their next one), event type and a
 * range of days (UTC, both ends included), walked by keyset both ways; and one attempt's detail.
 */
export function deliveryRoutes(context: DashboardContext): FastifyPluginAsyncTypebox {
  const { webhooks, clock } = context;
  return async (scope) => {
    scope.get('/webhooks/:id/deliveries', { schema: { params: Type.Object({ id: Id }), querystring: LogQuery } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { id } = request.params;
      const { query } = request;
      const now = clock.now();
      const outcomes = [...new Set(query.outcome ?? [])];
      const eventType = query.eventType ?? '';
      if (eventType !== '' && !(EVENT_TYPES as readonly string[]).includes(eventType)) throw ValidationFailedError.field('eventType', 'is not an event kind');
      const from = dayStart('from', query.from);
      const to = dayStart('to', query.to, true);
      const webhook = await webhooks.get(principal, id);
      const page = await webhooks.attemptLog(principal, id, { outcomes, ...(eventType && { eventType }), ...(from && { from }), ...(to && { to }) }, { next: query.next, previous: query.prev }, PAGE_SIZE);
      const filters = { outcome: outcomes, eventType, from: query.from ?? '', to: query.to ?? '' };
      const path = `/dashboard/webhooks/${id}/deliveries`;
      return reply.view('deliveries', {
        ...layoutOf(context, request, reply, `Deliveries of webhook ${webhook.id}`, 'webhooks'),
        webhook,
        outcomes: OUTCOME_FILTERS.map((o) => ({ ...o, id: `outcome-${o.value.replace('_', '-')}`, checked: outcomes.includes(o.value) })),
        eventTypes: EVENT_TYPES.map((type) => ({ name: type, selected: type === eventType })),
        from: filters.from,
        to: filters.to,
        filtered: outcomes.length > 0 || eventType !== '' || filters.from !== '' || filters.to !== '',
        attempts: page.items.map((attempt) => presentAttempt(attempt, now)),
        next: page.nextCursor ? `${path}${queryOf({ ...filters, next: page.nextCursor })}` : null,
        previous: page.previousCursor ? `${path}${queryOf({ ...filters, prev: page.previousCursor })}` : null,
        // The page a Replay button comes back to: this one, as filtered and paged.
        here: `${path}${queryOf({ ...filters, next: query.next, prev: query.prev })}`,
        replayed: query.replayed,
      });
    });

    scope.get('/webhooks/:id/deliveries/:attemptId', { schema: { params: Type.Object({ id: Id, attemptId: Id }) } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { id, attemptId } = request.params;
      const now = clock.now();
      const webhook = await webhooks.get(principal, id);
      const attempt = await webhooks.attempt(principal, id, attemptId);
      return reply.view('delivery', {
        ...layoutOf(context, request, reply, `Attempt ${attempt.attempt} of ${attempt.eventType}`, 'webhooks'),
        webhook,
        attempt: {
          ...presentAttempt(attempt, now),
          nextAttempt: when(attempt.nextAttemptAt, now),
          headers: attempt.requestHeaders && Object.entries(attempt.requestHeaders).map(([name, value]) => ({ name, value })),
          requestBody: attempt.requestBody,
          responseBody: attempt.responseBody,
          deliveryNow: DELIVERY_NOW[attempt.deliveryState],
        },
        here: `/dashboard/webhooks/${id}/deliveries/${attemptId}`,
      });
    });
  };
}
