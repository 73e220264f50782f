import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { clientGone } from '../../http/client-gone.js';
import { checkCsrf } from '../../http/pages.js';
import { systemClock } from '../../kernel/clock.js';
import { EVENT_DATA_SCHEMAS, EVENT_TRIGGERS, EVENT_TYPES, sampleEnvelopes, type EventType } from '../outbox/outbox.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { eventFilters, eventRow, eventWebhookRow, LOG_PAGE_SIZE, OBJECT_TYPES, TAIL_BATCH, TAIL_WAIT_S, tailDelay, tailUrl, TYPE_SUGGESTIONS, type EventItem, type EventPageJson } from './event-views.js';
import { queryOf } from './webhook-views.js';

interface Described {
  title?: string;
  description?: string;
  anyOf?: Described[];
}

/** What the catalogue shows of one kind: the same schema, trigger and samples docs/events.md is generated from. */
function eventKind(type: EventType, context: DashboardContext) {
  const schema = EVENT_DATA_SCHEMAS[type] as Described;
  return {
    type,
    anchor: `event-${type.replace(/[._]/g, '-')}`,
    trigger: EVENT_TRIGGERS[type],
    description: schema.description ?? '',
    variants: (schema.anyOf ?? []).map((variant) => ({ title: variant.title ?? 'Variant', description: variant.description ?? '' })),
    samples: sampleEnvelopes(type, { environment: context.environment }).map((envelope) => JSON.stringify(envelope, null, 2)),
  };
}

const Filters = {
  type: Type.Optional(Type.String({ maxLength: 1000 })),
  objectType: Type.Optional(Type.Union([Type.Literal(''), Type.Enum([...OBJECT_TYPES])])),
  objectId: Type.Optional(Type.String({ maxLength: 100 })),
  from: Type.Optional(Type.String({ maxLength: 20 })),
  to: Type.Optional(Type.String({ maxLength: 20 })),
};
const ListQuery = Type.Object({ ...Filters, cursor: Type.Optional(Type.String({ maxLength: 400 })) });
const TailQuery = Type.Object({ ...Filters, after: Type.String({ minLength: 1, maxLength: 400 }), wait: Type.Optional(Type.Literal('0')) });
const EventParams = Type.Object({ id: Type.String({ pattern: '^evt_[0-9a-f]{32}$' }) });
const DetailQuery = Type.Object({ resent: Type.Optional(Type.Enum(['queued', 'pending'])), webhook: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })) });
// A form sends text: the webhook's id as digits.
const ResendBody = Type.Object({ _csrf: Type.String(), webhook: Type.String({ pattern: '^[1-9][0-9]{0,14}$' }) });

const parsePage = (body: string) => JSON.parse(body) as EventPageJson;

/**
 * The Events pages (issue 31, page 1): the event log newest first with its filters in the URL
 * and a live tail (a held request through htmx, the event log's own long poll); one event with
 * its payload, the request that caused it and its deliveries per webhook, and Resend; the
 * catalogue of kinds (issue 19) at /dashboard/events/kinds.
 */
export function eventRoutes(context: DashboardContext): FastifyPluginAsync {
  // The schemas are fixed for the life of the process: built once.
  const kinds = EVENT_TYPES.map((type) => eventKind(type, context));
  const { events, eventDeliveries, requestLogs } = context;
  const now = () => (context.clock ?? systemClock).now();
  return async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.get('/events/kinds', async (request, reply) => reply.view('event-kinds', { ...layoutOf(context, request, reply, 'Event kinds', 'events'), kinds }));

    scope.get('/events', { schema: { querystring: ListQuery } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { form, filters } = eventFilters(request.query);
      const first = request.query.cursor === undefined;
      // The head before the page: an event committed in between is in the tail, never lost.
      const head = first ? parsePage((await events.list(principal, { ...filters, limit: 1, after: 'now' })).body).nextAfter : null;
      const page = parsePage((await events.list(principal, { ...filters, limit: LOG_PAGE_SIZE, ...(request.query.cursor !== undefined && { cursor: request.query.cursor }) })).body);
      const after = page.items[0]?.id ?? head;
      const here = `/dashboard/events${queryOf(form)}`;
      return reply.view('events', {
        ...layoutOf(context, request, reply, 'Events', 'events'),
        form,
        objectTypes: OBJECT_TYPES.map((name) => ({ name, selected: name === form.objectType })),
        suggestions: TYPE_SUGGESTIONS,
        filtered: Object.values(form).some((value) => value !== ''),
        rows: page.items.map((item) => eventRow(item, now())),
        tail: first && after ? tailUrl('/dashboard/events/tail', form, after, false) : null,
        here,
        newest: first ? null : here,
        next: page.nextCursor ? `/dashboard/events${queryOf({ ...form, cursor: page.nextCursor })}` : null,
      });
    });

    // The live tail's fragment: held until an event it would list commits (or TAIL_WAIT_S), then the new rows, newest first, and the next poller.
    scope.get('/events/tail', { schema: { querystring: TailQuery } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { form, filters } = eventFilters(request.query);
      const polling = request.query.wait === '0';
      const page = parsePage((await events.list(principal, { ...filters, limit: TAIL_BATCH, after: request.query.after, waitSeconds: polling ? 0 : TAIL_WAIT_S }, { signal: clientGone(reply.raw) })).body);
      const after = page.nextAfter ?? request.query.after;
      return reply.view('event-tail', { rows: page.items.reverse().map((item) => eventRow(item, now())), tail: tailUrl('/dashboard/events/tail', form, after, polling), delay: tailDelay(polling, page.items.length) });
    });

    scope.get('/events/:id', { schema: { params: EventParams, querystring: DetailQuery } }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { id } = request.params;
      const item = JSON.parse(await events.get(principal, id)) as EventItem;
      const requestId = typeof item.metadata.request_id === 'string' ? item.metadata.request_id : null;
      // Linked only when the request log keeps it: a request made from the dashboard, or past the log's retention, is not there.
      const logged = requestId !== null && (await requestLogs.list(principal, { limit: 1, requestId })).items.length > 0;
      const webhooks = (await eventDeliveries.ofEvent(principal, id)).map((row) => eventWebhookRow(row, now()));
      const resent = request.query.resent && webhooks.find((webhook) => webhook.id === request.query.webhook);
      return reply.view('event', {
        ...layoutOf(context, request, reply, `Event ${item.type}`, 'events'),
        event: eventRow(item, now()),
        payload: JSON.stringify(item, null, 2),
        requestId,
        requestHref: logged ? `/dashboard/logs/${encodeURIComponent(requestId)}` : null,
        webhooks,
        notice: resent ? (request.query.resent === 'queued' ? `The event is queued for ${resent.url}: its attempt appears below in a moment.` : `A delivery of this event to ${resent.url} is already pending: it is sent on its schedule.`) : null,
      });
    });

    scope.post('/events/:id/resend', { schema: { params: EventParams, body: ResendBody }, preValidation: checkCsrf(plain) }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const { id } = request.params;
      // The caller must see the event itself (404 otherwise), not only manage the webhook.
      await events.get(principal, id);
      const outcome = await eventDeliveries.resend(principal, Number(request.body.webhook), id);
      return reply.redirect(`/dashboard/events/${id}${queryOf({ resent: outcome, webhook: request.body.webhook })}`, 303);
    });
  };
}
