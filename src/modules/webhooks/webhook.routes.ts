import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { changeContextOf, principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { EVENT_TYPES } from '../outbox/outbox.module.js';
import type { WebhookRecord } from './webhook.repository.js';
import { CreatedWebhook, DeadLetterQuery, DeadLetterReplayInput, ReplayInput, TestResult, Webhook, WebhookAttempt, WebhookAttemptDetail, WebhookDeadLetter, WebhookInput, WebhookPatch } from './webhook.schema.js';
import type { WebhookService } from './webhook.service.js';

// Your own webhooks need only a credential of yours; what they may carry follows its scopes.
const OWN: AuthRequirement = { schemes: ['api_key', 'any_bearer'] };
const TAGS = ['webhooks'];
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const WebhookRef = Type.Unsafe<Type.Static<typeof Webhook>>({ $ref: 'Webhook#' });
const ACCESS = 'An account sees and manages its own webhooks (another\'s is a 404); staff (`admin`) see every account\'s.';
/** Every read and replay of deliveries (decisions.md, issue 28). */
const ENVIRONMENT = 'Only events of this deployment\'s environment (`CHEESE_ENV`, as the credential\'s): a store shared with a deployment of another environment never lists, replays or sends its events here.';
const MANAGE = `${ACCESS} Managing a webhook (changing, pausing, testing, replaying, rotating its secret, deleting it, reading its attempt log) needs a credential that holds every scope in its \`scopes\` (403 otherwise): a weaker credential of the same account cannot redirect or replay what a stronger one subscribed to.`;
const Cursor = Type.Optional(Type.String({ maxLength: 200, description: '`nextCursor` of the previous page.' }));
const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 }));

function present(webhook: WebhookRecord) {
  const { accountId: _accountId, ...view } = webhook;
  return view;
}

export const webhookRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhookService }> = async (app, { webhooks }) => {
  app.addSchema(Webhook);
  app.addSchema(CreatedWebhook);
  app.addSchema(WebhookAttempt);
  app.addSchema(WebhookAttemptDetail);
  app.addSchema(WebhookDeadLetter);

  app.post('/webhooks', {
    config: { auth: OWN, idempotent: 'secret' },
    schema: {
      tags: TAGS,
      operationId: 'createWebhook',
      summary: 'Register a webhook: a URL and the events it wants',
      description:
        'Answers with the webhook and its `secret` (`whsec_…`), shown this once. Every delivery is signed with it twice: `X-Cheese-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>` and the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). ' +
        'What the webhook receives follows the scopes of the credential registering it: catalogue events need `read:cheeses`, orders `read:orders`, customer events `read:profile`; a customer receives only their own orders\' and profile\'s events, staff everyone\'s. ' +
        'Naming a kind the credential may not receive is a 403; a wildcard delivers only what it may. At most 10 webhooks per account (409). See docs/events.md for every kind. ' +
        'A webhook made with an app\'s OAuth access token (any grant) lives only as long as the app\'s authorization: it names the app in `oauthClientId`, and is deleted, with its pending deliveries, when that grant ends ' +
        '(the customer revokes the app, the password changes or is reset, a refresh token or code is reused, the grant is revoked under RFC 7009, the client or the account is deleted, or the grant expires and is pruned). ' +
        'A retiring API key (rolled, in its grace period) makes no webhook (403).',
      body: WebhookInput,
      response: { 201: Type.Unsafe({ $ref: 'CreatedWebhook#' }), ...errorResponses(400, 401, 403, 409, 415, 422) },
    },
  }, async (request, reply) => {
    const { webhook, secret } = await webhooks.create(principalOf(request), request.body);
    return reply.code(201).header('cache-control', 'no-store').header('location', `/v2/webhooks/${webhook.id}`).send({ ...present(webhook), secret });
  });

  app.get('/webhooks', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'listWebhooks',
      summary: 'Your webhooks (never their secrets)',
      description: `Oldest first. ${ACCESS} Staff may ask for one account's with \`account\`.`,
      querystring: Type.Object(
        { limit: Limit, cursor: Cursor, account: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only this account\'s webhooks (a username, in any case): for staff; anyone else naming another account gets none.' })) },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ items: Type.Array(WebhookRef), hasMore: Type.Boolean(), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const { limit = 20, cursor, account } = request.query;
    const page = await webhooks.list(principalOf(request), cursor, limit, { account });
    return { ...page, items: page.items.map(present) };
  });

  app.get('/webhooks/:id', {
    config: { auth: OWN },
    schema: { tags: TAGS, operationId: 'getWebhook', summary: 'One webhook', description: ACCESS, params: IdParams, response: { 200: WebhookRef, ...errorResponses(400, 401, 404) } },
  }, async (request) => present(await webhooks.get(principalOf(request), request.params.id)));

  app.patch('/webhooks/:id', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'updateWebhook',
      summary: 'Change a webhook\'s URL, events, description or attempts; pause or resume it',
      description: `New \`events\` are checked against the credential making the change. A new \`url\` or new \`events\` re-derive \`scopes\` from that credential (never keeping more than it holds); staff changing another account's webhook keep its scopes. \`active: true\` resumes a paused webhook, or one a 410 disabled. An app's OAuth token changes only the webhooks that app made (403 otherwise). ${MANAGE}`,
      params: IdParams,
      body: WebhookPatch,
      response: { 200: WebhookRef, ...errorResponses(400, 401, 403, 404, 415, 422) },
    },
  }, async (request) => present(await webhooks.update(principalOf(request), request.params.id, request.body)));

  app.delete('/webhooks/:id', {
    config: { auth: OWN },
    schema: { tags: TAGS, operationId: 'deleteWebhook', summary: 'Delete a webhook, its pending deliveries and its log', description: MANAGE, params: IdParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(400, 401, 403, 404) } },
  }, async (request, reply) => {
    await webhooks.delete(principalOf(request), request.params.id);
    return reply.code(204).send(null);
  });

  app.get('/webhooks/:id/deliveries', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'listWebhookDeliveries',
      summary: 'The attempt log: every attempt to deliver an event to this webhook',
      description:
        'Newest first, kept for 30 days (WEBHOOK_RETENTION_DAYS). Filters: `outcome` (one or several, repeated: `delivered`, `failed`, `dead_lettered`, and `pending`: the failed attempts whose delivery still waits for its next attempt, a part of `failed`), `eventType`, and `from` … `to` (when the attempt was made: `from` inclusive, `to` exclusive). ' +
        `Pages are a keyset walk over the attempt's id: no page counts the log. ${ENVIRONMENT} ${MANAGE}`,
      params: IdParams,
      querystring: Type.Object(
        {
          outcome: Type.Optional(Type.Array(Type.Enum(['delivered', 'failed', 'pending', 'dead_lettered']), { minItems: 1, maxItems: 4, description: 'Any of these (repeat the parameter).' })),
          eventType: Type.Optional(Type.Enum([...EVENT_TYPES])),
          from: Type.Optional(Type.String({ format: 'date-time', description: 'Attempts made at or after this time.' })),
          to: Type.Optional(Type.String({ format: 'date-time', description: 'Attempts made before this time.' })),
          limit: Limit,
          cursor: Cursor,
        },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ items: Type.Array(Type.Unsafe({ $ref: 'WebhookAttempt#' })), hasMore: Type.Boolean(), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, async (request) => {
    const { outcome, eventType, from, to, limit = 20, cursor } = request.query;
    return webhooks.attempts(principalOf(request), request.params.id, { ...(outcome && { outcomes: outcome }), ...(eventType && { eventType }), ...(from && { from }), ...(to && { to }) }, cursor, limit);
  });

  app.get('/webhooks/:id/deliveries/:attemptId', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'getWebhookDelivery',
      summary: 'One attempt: the headers and body sent, and the start of the answer',
      description: `The headers sent (signatures included, never the secret), the body (the same bytes on every attempt of the event), the receiver's status and the first 4 KB of its answer, the class of error, and the delivery's state now. An attempt of another webhook is a 404. ${MANAGE}`,
      params: Type.Object({ id: IdParams.properties.id, attemptId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }),
      response: { 200: Type.Unsafe({ $ref: 'WebhookAttemptDetail#' }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => {
    const { requestHeaders, requestBody, responseBody, latest: _latest, pending: _pending, replayable: _replayable, ...attempt } = await webhooks.attempt(principalOf(request), request.params.id, request.params.attemptId);
    return { ...attempt, request: { headers: requestHeaders, body: requestBody }, response: { statusCode: attempt.statusCode, body: responseBody } };
  });

  app.get('/webhooks/dead-letters', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'listWebhookDeadLetters',
      summary: 'Dead-lettered events across your webhooks',
      description:
        'The deliveries that failed their last attempt and wait for a replay, newest first, across every webhook this credential may manage (staff: every account\'s, or one `account`\'s), or one webhook\'s (`webhookId`). Replay them with POST /webhooks/dead-letters/replay, or per webhook with POST /webhooks/{id}/replay. ' + ENVIRONMENT,
      querystring: Type.Object({ ...DeadLetterQuery.properties, limit: Limit, cursor: Cursor }, { additionalProperties: false }),
      response: { 200: Type.Object({ items: Type.Array(Type.Unsafe({ $ref: 'WebhookDeadLetter#' })), hasMore: Type.Boolean(), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => {
    const { webhookId, account, limit = 20, cursor } = request.query;
    const { items, hasMore, nextCursor } = await webhooks.deadLetters(principalOf(request), { webhookId, account }, { next: cursor }, limit);
    return { items, hasMore, nextCursor };
  });

  app.post('/webhooks/dead-letters/replay', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'replayWebhookDeadLetters',
      summary: 'Send dead-lettered events again, across your webhooks',
      description:
        'Re-queues dead-lettered deliveries with a fresh schedule from now: the ones named by `deliveryIds` (at most 100), or every one in scope (every webhook this credential may manage; staff: every account\'s, or one `account`\'s; or one `webhookId`\'s). Others\' deliveries, and ones no longer dead-lettered, are left alone. Each replay is a new attempt in the webhook\'s log. ' + ENVIRONMENT,
      querystring: DeadLetterReplayInput,
      response: { 200: Type.Object({ requeued: Type.Integer({ description: 'How many events were re-queued.' }) }), ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, async (request) => {
    const { webhookId, account, deliveryIds } = request.query;
    return { requeued: await webhooks.replayDeadLetters(principalOf(request), { webhookId, account, deliveryIds }) };
  });

  app.post('/webhooks/:id/test', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'testWebhook',
      summary: 'Send webhook.test now and answer with the attempt\'s outcome',
      description: `One attempt, signed like every delivery, sent even to a paused webhook; it appears in the attempt log. A failed test is not retried (replay it). ${MANAGE}`,
      params: IdParams,
      response: { 200: TestResult, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => webhooks.test(principalOf(request), request.params.id, changeContextOf(request)));

  app.post('/webhooks/:id/replay', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'replayWebhook',
      summary: 'Send this webhook\'s dead-lettered events again, chosen events, or every event of a time range',
      description: `Without parameters, every dead-lettered event of this webhook. With \`from\` and/or \`to\` (query parameters, RFC 3339), every settled event (delivered or dead-lettered) whose event came within \`from\` (inclusive) … \`to\` (exclusive): for a receiver that lost what it had received. With \`eventIds\` (repeated, at most 100), those events if settled (with \`from\`/\`to\` too: those of them in the range). Events still being retried are left to their schedule. Each re-queued event starts a fresh schedule now; a paused webhook's wait until it resumes. ${ENVIRONMENT} ${MANAGE}`,
      params: IdParams,
      querystring: ReplayInput,
      response: { 200: Type.Object({ requeued: Type.Integer({ description: 'How many events were re-queued.' }) }), ...errorResponses(400, 401, 403, 404, 415, 422) },
    },
  }, async (request) => ({ requeued: await webhooks.replay(principalOf(request), request.params.id, request.query) }));

  app.post('/webhooks/:id/rotate-secret', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret; the old one keeps signing for 24 hours',
      description: `Until \`previousSecretExpiresAt\` every delivery carries both signatures (X-Cheese-Signature: two comma-separated \`sha256=\` values; webhook-signature: two space-separated \`v1,\` values), so receivers can switch without losing a delivery. An app's OAuth token rotates only the webhooks that app made (403 otherwise). ${MANAGE}`,
      params: IdParams,
      response: { 200: Type.Object({ secret: Type.String(), previousSecretExpiresAt: Type.String({ format: 'date-time' }) }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const rotated = await webhooks.rotateSecret(principalOf(request), request.params.id);
    return reply.header('cache-control', 'no-store').send(rotated);
  });
};
