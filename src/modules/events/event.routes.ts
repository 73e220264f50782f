import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { clientGone } from '../../http/client-gone.js';
import { errorResponses } from '../../http/common.schema.js';
import { envelopeSchemas, EventIdParams, EventListQuery, EventPage, EventRef, eventSchemas, EventUnion } from './event.schema.js';
import type { EventService } from './event.service.js';

// Any credential of the account: what it reads follows its scopes, as a webhook's deliveries do.
const OWN: AuthRequirement = { schemes: ['api_key', 'any_bearer'] };
const TAGS = ['events'];
/** Seconds a poller should wait between two polls that found nothing new. */
export const POLL_INTERVAL_S = 5;

const ACCESS =
  'You see the kinds your credential\'s scopes cover (catalogue events need `read:cheeses`, orders `read:orders`, customer events `read:profile`: as a webhook you registered would receive them), and of those the public ones (the catalogue), your account\'s, or, for staff (`admin`), every one; only this deployment\'s (a test key never sees live events). Another account\'s event is a 404.';
const ORDERING =
  'The log is in commit order: an event is listed once no transaction still running could commit one before it (on PostgreSQL, ids are taken before commit), so polling forward with `order=asc&after=<the last id you saw>` never skips one. `created_at` is for display and may be a few milliseconds out of that order. Events are kept `EVENT_RETENTION_DAYS` (30 days by default).';

const etag = { type: 'string', description: 'The representation\'s tag: send it back in `If-None-Match` to get a 304 while nothing changed.' };
const pollInterval = { type: 'integer', minimum: 1, examples: [POLL_INTERVAL_S], description: 'How many seconds to wait before polling again when a page brought nothing new.' };
const notModified = { type: 'null', description: 'Nothing changed since the `ETag` sent in `If-None-Match`: no body.', headers: { ETag: etag, 'X-Poll-Interval': pollInterval } };
const gone = { $ref: 'Error#', description: 'The event is older than the log keeps (`EVENT_RETENTION_DAYS`) and was pruned: `type` is `not_found`. Told apart from a 404 by the time in the id (ids of events recorded before 2.5 carry none: those are a 404).' };

export const eventRoutes: FastifyPluginAsyncTypebox<{ events: EventService }> = async (app, { events }) => {
  for (const schema of [...envelopeSchemas(), ...eventSchemas(), EventUnion]) app.addSchema(schema);

  app.get('/events', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'listEvents',
      summary: 'The event log: what happened, newest first, or polled forward',
      description:
        `Every event a webhook would carry, read instead of pushed: to catch up after an outage, audit an order (\`object_type=order&object_id=…\`), or poll where no public URL exists. Each item is the webhook envelope byte for byte, with \`pending_webhooks\`. ${ORDERING} ` +
        `Polling: \`GET /events?after=evt_…\` with the \`ETag\` of the last answer in \`If-None-Match\` answers 304 while nothing is new; wait \`X-Poll-Interval\` seconds between polls. Long polling: \`GET /events?after=now&wait=25\`, then \`after=<nextAfter>\` each time, holds each request until an event arrives (no pause between polls needed). ${ACCESS}`,
      querystring: EventListQuery,
      response: {
        200: { ...EventPage, headers: { ETag: etag, 'X-Poll-Interval': pollInterval } },
        304: notModified,
        ...errorResponses(400, 401, 403, 404),
        410: gone,
      },
    },
  }, async (request, reply) => {
    const q = request.query;
    const page = await events.list(principalOf(request), {
      limit: q.limit ?? 20,
      cursor: q.cursor,
      type: q.type,
      createdGte: q.created_gte,
      createdLt: q.created_lt,
      objectType: q.object_type,
      objectId: q.object_id,
      undelivered: q.delivery_success === 'false',
      order: q.order,
      after: q.after,
      waitSeconds: q.wait,
    }, { signal: clientGone(reply.raw) });
    return reply.header('content-type', 'application/json; charset=utf-8').header('x-poll-interval', String(POLL_INTERVAL_S)).send(page.body);
  });

  app.get('/events/:id', {
    config: { auth: OWN },
    schema: {
      tags: TAGS,
      operationId: 'getEvent',
      summary: 'One event of the log',
      description: `The webhook envelope of the event, byte for byte, with \`pending_webhooks\`. ${ACCESS}`,
      params: EventIdParams,
      response: { 200: { ...EventRef, headers: { ETag: etag } }, 304: { type: 'null', description: notModified.description, headers: { ETag: etag } }, ...errorResponses(400, 401, 404), 410: gone },
    },
  }, async (request, reply) => {
    const body = await events.get(principalOf(request), request.params.id);
    return reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
};
