import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import type { WebhookRecord } from '../webhooks/webhooks.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { deadLetterRoutes } from './dead-letters.routes.js';
import { deliveryRoutes } from './deliveries.routes.js';
import { attemptBadge, httpStatusBadge, webhookHealthBadge } from './badges.js';
import { when } from './format.js';
import { revealOnce, takeReveal } from './reveal.js';
import { stepUp, stepUpDue, type Confirmation } from './step-up.js';
import { attemptStatus, eventGroups, eventsText, presentAttempt, queryOf, readWebhookForm, SENSITIVE, webhookStatus, type WebhookForm } from './webhook-views.js';

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const ActionForm = Type.Object({ _csrf: Type.String(), password: Type.Optional(Type.String({ maxLength: 1000 })) });
const WebhookFormBody = Type.Object({
  _csrf: Type.String(),
  url: Type.String({ maxLength: 4000 }),
  events: Type.Optional(Type.Unknown()),
  allEvents: Type.Optional(Type.String({ maxLength: 10 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  maxAttempts: Type.Optional(Type.String({ maxLength: 10 })),
});

/** Attempts shown on a webhook's page; the deliveries page has them all. */
const RECENT = 10;

/**
 * The webhooks pages (issue 19, page 3): the list (staff: every account's, `?account=`), add
 * (the secret shown once), a webhook's page with its actions (test, rotate, enable or disable,
 * delete, replay all), edit. Its deliveries (page 4) and the dead letter queue (page 5) are
 * deliveries.routes.ts and dead-letters.routes.ts, registered here.
 */
export function webhookRoutes(context: DashboardContext): FastifyPluginAsyncTypebox {
  const { webhooks, clock } = context;
  return async (scope) => {
    const csrf = checkCsrf(scope);
    await scope.register(deliveryRoutes(context));
    await scope.register(deadLetterRoutes(context));

    const ListQuery = Type.Object({ account: Type.Optional(Type.String({ maxLength: 100 })), cursor: Type.Optional(Type.String({ maxLength: 200 })) });
    scope.get('/webhooks', { schema: { querystring: ListQuery } }, async (request, reply) => {
      const session = sessionOf(request);
      const staff = session.role === 'admin';
      const { query } = request;
      const now = clock.now();
      const account = staff ? (query.account ?? '').trim() : '';
      const page = await webhooks.list(session.principal, query.cursor, 20, { account });
      const last = await webhooks.lastAttempts(session.principal, page.items.map((webhook) => webhook.id));
      const rows = page.items.map((webhook) => {
        const attempt = last.get(webhook.id);
        return {
          id: webhook.id,
          url: webhook.url,
          owner: webhook.owner,
          events: eventsText(webhook.events),
          health: webhookHealthBadge(webhookStatus(webhook)),
          last: attempt ? { outcome: attemptBadge(attemptStatus({ outcome: attempt.outcome, pending: false })), response: attempt.statusCode === null ? null : httpStatusBadge(attempt.statusCode), at: when(attempt.at, now) } : null,
        };
      });
      return reply.view('webhooks', {
        ...layoutOf(context, request, reply, 'Webhooks', 'webhooks'),
        staff,
        account,
        rows,
        next: page.nextCursor ? `/dashboard/webhooks${queryOf({ account, cursor: page.nextCursor })}` : null,
        first: query.cursor ? `/dashboard/webhooks${queryOf({ account })}` : null,
      });
    });

    const formPage = (request: FastifyRequest, reply: FastifyReply, form: { title: string; action: string; cancel: string; values?: Partial<WebhookForm> }) => {
      const events = form.values?.events ?? [];
      return reply.view('webhook-form', {
        ...layoutOf(context, request, reply, form.title, 'webhooks'),
        heading: form.title,
        action: form.action,
        cancel: form.cancel,
        url: form.values?.url ?? '',
        description: form.values?.description ?? '',
        maxAttempts: form.values?.maxAttempts ?? 6,
        all: events.includes('*'),
        groups: eventGroups(events),
      });
    };

    scope.get('/webhooks/new', async (request, reply) => formPage(request, reply, { title: 'Add webhook', action: '/dashboard/webhooks', cancel: '/dashboard/webhooks' }));

    scope.post('/webhooks', { schema: { body: WebhookFormBody }, preValidation: csrf }, async (request, reply) => {
      const form = readWebhookForm(request.body);
      const { webhook, secret } = await webhooks.create(sessionOf(request).principal, form);
      await revealOnce(context, request, reply, {
        label: `The signing secret of ${webhook.url}`,
        secret,
        note: 'Every delivery is signed with it (X-Cheese-Signature and the Standard Webhooks headers): store it with your receiver now.',
      });
      return reply.redirect(`/dashboard/webhooks/${webhook.id}`, 303);
    });

    const webhookOf = (request: FastifyRequest, id: number): Promise<WebhookRecord> => webhooks.get(sessionOf(request).principal, id);

    const PageQuery = Type.Object({ test: Type.Optional(Type.String({ maxLength: 100 })), replayed: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })) });
    scope.get('/webhooks/:id', { schema: { params: IdParams, querystring: PageQuery } }, async (request, reply) => {
      const session = sessionOf(request);
      const webhook = await webhookOf(request, request.params.id);
      const reveal = await takeReveal(context, request, reply);
      const { test: tested, replayed } = request.query;
      const now = clock.now();
      const [recent, deadLettered, test] = await Promise.all([
        webhooks.attemptLog(session.principal, webhook.id, {}, {}, RECENT),
        webhooks.countDeadLetters(session.principal, { webhookId: webhook.id }),
        tested ? webhooks.latestAttemptOf(session.principal, webhook.id, tested) : undefined,
      ]);
      return reply.view('webhook', {
        ...layoutOf(context, request, reply, `Webhook ${webhook.id}`, 'webhooks'),
        webhook: {
          ...webhook,
          status: webhookStatus(webhook),
          health: webhookHealthBadge(webhookStatus(webhook)),
          events: eventsText(webhook.events),
          created: when(webhook.createdAt, now),
          previousSecretUntil: webhook.previousSecretExpiresAt && Date.parse(webhook.previousSecretExpiresAt) > now ? when(webhook.previousSecretExpiresAt, now) : null,
        },
        staff: session.role === 'admin',
        ...reveal,
        test: test && presentAttempt(test, now),
        recent: recent.items.map((attempt) => presentAttempt(attempt, now)),
        more: recent.hasMore,
        deadLettered,
        replayed,
      });
    });

    scope.get('/webhooks/:id/edit', { schema: { params: IdParams } }, async (request, reply) => {
      const webhook = await webhookOf(request, request.params.id);
      return formPage(request, reply, { title: 'Edit webhook', action: `/dashboard/webhooks/${webhook.id}/edit`, cancel: `/dashboard/webhooks/${webhook.id}`, values: webhook });
    });
    scope.post('/webhooks/:id/edit', { schema: { params: IdParams, body: WebhookFormBody }, preValidation: csrf }, async (request, reply) => {
      const webhook = await webhookOf(request, request.params.id);
      const form = readWebhookForm(request.body);
      const sameEvents = form.events.length === webhook.events.length && form.events.every((event) => webhook.events.includes(event));
      const patch = {
        ...(form.url !== webhook.url && { url: form.url }),
        ...(!sameEvents && { events: form.events }),
        ...(form.description !== webhook.description && { description: form.description }),
        ...(form.maxAttempts !== webhook.maxAttempts && { maxAttempts: form.maxAttempts }),
      };
      if (Object.keys(patch).length > 0) await webhooks.update(sessionOf(request).principal, webhook.id, patch);
      return reply.redirect(`/dashboard/webhooks/${webhook.id}`, 303);
    });

    for (const [path, active] of [['enable', true], ['disable', false]] as const) {
      scope.post(`/webhooks/:id/${path}`, { schema: { params: IdParams, body: ActionForm }, preValidation: csrf }, async (request, reply) => {
        const webhook = await webhookOf(request, request.params.id);
        await webhooks.update(sessionOf(request).principal, webhook.id, { active });
        return reply.redirect(`/dashboard/webhooks/${webhook.id}`, 303);
      });
    }

    scope.post('/webhooks/:id/test', { schema: { params: IdParams, body: ActionForm }, preValidation: csrf }, async (request, reply) => {
      const { principal } = sessionOf(request);
      const webhook = await webhookOf(request, request.params.id);
      const outcome = await webhooks.test(principal, webhook.id, { requestId: request.id, principal });
      return reply.redirect(`/dashboard/webhooks/${webhook.id}${queryOf({ test: outcome.eventId })}`, 303);
    });

    scope.post('/webhooks/:id/rotate-secret', { schema: { params: IdParams, body: ActionForm }, preValidation: csrf }, async (request, reply) => {
      const webhook = await webhookOf(request, request.params.id);
      const rotated = await webhooks.rotateSecret(sessionOf(request).principal, webhook.id);
      await revealOnce(context, request, reply, {
        label: `The new signing secret of ${webhook.url}`,
        secret: rotated.secret,
        note: `The old secret also signs every delivery until ${when(rotated.previousSecretExpiresAt, clock.now()).exact}: switch your receiver to the new one before then.`,
      });
      return reply.redirect(`/dashboard/webhooks/${webhook.id}`, 303);
    });

    const deletion = (webhook: WebhookRecord): Confirmation => ({
      title: 'Delete webhook',
      question: `Delete the webhook ${webhook.url}? Its pending deliveries, dead letters and attempt log go with it; this cannot be undone.`,
      action: `/dashboard/webhooks/${webhook.id}/delete`,
      cancel: `/dashboard/webhooks/${webhook.id}`,
    });
    scope.get('/webhooks/:id/delete', { schema: { params: IdParams } }, async (request, reply) => {
      const webhook = await webhookOf(request, request.params.id);
      return reply.view('confirm', { ...layoutOf(context, request, reply, 'Delete webhook', 'webhooks'), ...deletion(webhook), hidden: [], stepUp: stepUpDue(context, request, SENSITIVE) });
    });
    scope.post('/webhooks/:id/delete', { schema: { params: IdParams, body: ActionForm }, preValidation: csrf }, async (request, reply) => {
      const webhook = await webhookOf(request, request.params.id);
      const gate = await stepUp(context, request, reply, SENSITIVE, deletion(webhook));
      if (gate !== 'proceed') return gate;
      await webhooks.delete(sessionOf(request).principal, webhook.id);
      return reply.redirect('/dashboard/webhooks', 303);
    });
  };
}
