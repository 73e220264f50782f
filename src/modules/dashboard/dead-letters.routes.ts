import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import { ValidationFailedError } from '../../kernel/errors.js';
import { MAX_REPLAY_EVENTS, type DeadLetterQuery } from '../webhooks/webhooks.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { listOf } from './format.js';
import { stepUp, stepUpDue, type Confirmation } from './step-up.js';
import { backTo, PAGE_SIZE, presentDeadLetter, queryOf, SENSITIVE, withParam } from './webhook-views.js';

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Cursor = Type.Optional(Type.String({ maxLength: 200 }));
const Account = Type.Optional(Type.String({ maxLength: 100 }));
/** The scope of a bulk replay, as its forms send it: one webhook (an id), one account (staff), or all. */
const ScopeFields = { webhook: Type.Optional(Type.String({ maxLength: 20 })), account: Account };
const Password = Type.Optional(Type.String({ maxLength: 1000 }));
const Back = Type.Optional(Type.String({ maxLength: 2000 }));
const ListQuery = Type.Object({ account: Account, next: Cursor, prev: Cursor, replayed: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })) });
type ListQueryValues = Type.Static<typeof ListQuery>;

/**
 * The dead letter queue (issue 19, page 5), per webhook and across every webhook the caller
 * may manage (staff: every account's, or one's): replay one (Replay), the selected ones, or
 * all (a confirmation states the count). Bulk replays ask for the password after 10 minutes;
 * each touches only the caller's deliveries. A replay is a new attempt in the log, here and in the API.
 */
export function deadLetterRoutes(context: DashboardContext): FastifyPluginAsyncTypebox {
  const { webhooks, clock } = context;
  return async (scope) => {
    const csrf = checkCsrf(scope);

    /** The scope a form or a URL names: a webhook id that is not a number is a 422, an account only for staff. */
    const scopeOf = (request: FastifyRequest, fields: { webhook?: string; account?: string }): DeadLetterQuery & { path: string } => {
      const staff = sessionOf(request).role === 'admin';
      const account = staff ? (fields.account ?? '').trim() : '';
      if (fields.webhook !== undefined && fields.webhook !== '') {
        if (!/^[1-9][0-9]{0,15}$/.test(fields.webhook)) throw ValidationFailedError.field('webhook', 'is not a webhook id');
        return { webhookId: Number(fields.webhook), path: `/dashboard/webhooks/${fields.webhook}/dead-letters` };
      }
      return { ...(account && { account }), path: `/dashboard/webhooks/dead-letters${queryOf({ account })}` };
    };

    const listPage = async (request: FastifyRequest, query: ListQueryValues, webhookId: number | undefined) => {
      const session = sessionOf(request);
      const now = clock.now();
      const staff = session.role === 'admin';
      const account = staff && webhookId === undefined ? (query.account ?? '').trim() : '';
      const webhook = webhookId === undefined ? undefined : await webhooks.get(session.principal, webhookId);
      const page = await webhooks.deadLetters(session.principal, { webhookId, ...(account && { account }) }, { next: query.next, previous: query.prev }, PAGE_SIZE);
      const path = webhook ? `/dashboard/webhooks/${webhook.id}/dead-letters` : '/dashboard/webhooks/dead-letters';
      return {
        webhook,
        staff,
        account,
        letters: page.items.map((letter) => presentDeadLetter(letter, now)),
        next: page.nextCursor ? `${path}${queryOf({ account, next: page.nextCursor })}` : null,
        previous: page.previousCursor ? `${path}${queryOf({ account, prev: page.previousCursor })}` : null,
        here: `${path}${queryOf({ account, next: query.next, prev: query.prev })}`,
        scope: { webhook: webhook ? String(webhook.id) : '', account },
        replayed: query.replayed,
        max: MAX_REPLAY_EVENTS,
      };
    };

    scope.get('/webhooks/dead-letters', { schema: { querystring: ListQuery } }, async (request, reply) =>
      reply.view('dead-letters', { ...layoutOf(context, request, reply, 'Dead letter queue', 'webhooks'), ...(await listPage(request, request.query, undefined)) }),
    );
    scope.get('/webhooks/:id/dead-letters', { schema: { params: Type.Object({ id: Id }), querystring: ListQuery } }, async (request, reply) => {
      const page = await listPage(request, request.query, request.params.id);
      return reply.view('dead-letters', { ...layoutOf(context, request, reply, `Dead letter queue of webhook ${page.webhook!.id}`, 'webhooks'), ...page });
    });

    // One: the Replay button of a dead-lettered delivery or attempt. Not a bulk action: no password.
    scope.post(
      '/webhooks/:id/dead-letters/:deliveryId/replay',
      { schema: { params: Type.Object({ id: Id, deliveryId: Id }), body: Type.Object({ _csrf: Type.String(), back: Back }) }, preValidation: csrf },
      async (request, reply) => {
        const { id, deliveryId } = request.params;
        const replayed = await webhooks.replayDeadLetter(sessionOf(request).principal, id, deliveryId);
        const back = backTo(request.body.back, `/dashboard/webhooks/${id}/dead-letters`);
        return reply.redirect(withParam(back, 'replayed', replayed ? '1' : '0'), 303);
      },
    );

    // The selected ones (checkboxes): a bulk replay, within the scope the page showed.
    const SelectedForm = Type.Object({ _csrf: Type.String(), delivery: Type.Optional(Type.Unknown()), ...ScopeFields, back: Back, password: Password });
    scope.post('/webhooks/dead-letters/replay-selected', { schema: { body: SelectedForm }, preValidation: csrf }, async (request, reply) => {
      const { body } = request;
      const chosen = [...new Set(listOf(body.delivery))];
      if (chosen.length === 0) throw ValidationFailedError.field('delivery', 'needs at least one event: tick the ones to replay');
      if (chosen.length > MAX_REPLAY_EVENTS) throw ValidationFailedError.field('delivery', `names at most ${MAX_REPLAY_EVENTS} events: replay all instead`);
      if (!chosen.every((id) => /^[1-9][0-9]{0,15}$/.test(id))) throw ValidationFailedError.field('delivery', 'is not a delivery id');
      const { path, ...query } = scopeOf(request, body);
      const back = backTo(body.back, path);
      const gate = await stepUp(context, request, reply, SENSITIVE, {
        title: 'Replay selected',
        question: `Replay the ${chosen.length} selected dead-lettered event${chosen.length === 1 ? '' : 's'}?`,
        action: '/dashboard/webhooks/dead-letters/replay-selected',
        cancel: back,
        hidden: [...chosen.map((value) => ({ name: 'delivery', value })), { name: 'webhook', value: body.webhook ?? '' }, { name: 'account', value: body.account ?? '' }, { name: 'back', value: back }],
      });
      if (gate !== 'proceed') return gate;
      const replayed = await webhooks.replayDeadLetters(sessionOf(request).principal, { ...query, deliveryIds: chosen.map(Number) });
      return reply.redirect(withParam(back, 'replayed', String(replayed)), 303);
    });

    // All of them: a confirmation that states the count, and the password after 10 minutes.
    const allPage = async (request: FastifyRequest, fields: { webhook?: string; account?: string }): Promise<Confirmation & { path: string; query: DeadLetterQuery }> => {
      const session = sessionOf(request);
      const { path, ...query } = scopeOf(request, fields);
      const webhook = query.webhookId === undefined ? undefined : await webhooks.get(session.principal, query.webhookId);
      const count = await webhooks.countDeadLetters(session.principal, query);
      const whose = webhook ? `of the webhook ${webhook.url}` : query.account ? `of ${query.account}'s webhooks` : session.role === 'admin' ? 'of every account\'s webhooks' : 'of your webhooks';
      return {
        title: 'Replay all',
        question: count === 0 ? `There are no dead-lettered events ${whose} to replay.` : `Replay all ${count} dead-lettered event${count === 1 ? '' : 's'} ${whose}? Each is sent again with a fresh schedule.`,
        action: '/dashboard/webhooks/dead-letters/replay-all',
        cancel: path,
        hidden: [{ name: 'webhook', value: webhook ? String(webhook.id) : '' }, { name: 'account', value: query.account ?? '' }],
        path,
        query,
      };
    };
    scope.get('/webhooks/dead-letters/replay-all', { schema: { querystring: Type.Object(ScopeFields) } }, async (request, reply) => {
      const { path: _path, query: _query, ...page } = await allPage(request, request.query);
      return reply.view('confirm', { ...layoutOf(context, request, reply, page.title, 'webhooks'), ...page, stepUp: stepUpDue(context, request, SENSITIVE) });
    });
    scope.post('/webhooks/dead-letters/replay-all', { schema: { body: Type.Object({ _csrf: Type.String(), ...ScopeFields, password: Password }) }, preValidation: csrf }, async (request, reply) => {
      const { path, query, ...page } = await allPage(request, request.body);
      const gate = await stepUp(context, request, reply, SENSITIVE, page);
      if (gate !== 'proceed') return gate;
      const replayed = await webhooks.replayDeadLetters(sessionOf(request).principal, query);
      return reply.redirect(withParam(path, 'replayed', String(replayed)), 303);
    });
  };
}
