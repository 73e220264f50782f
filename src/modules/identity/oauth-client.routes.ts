import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { CreatedOAuthClient, OAuthClient, OAuthClientInput } from './oauth-client.schema.js';
import type { OAuthClientService } from './oauth-client.service.js';
import { firstPartyRefusal, retiringRefusal } from './api-key.rules.js';

// Staff's own credentials only, never an OAuth access token; a retiring key registers or removes no client.
const STAFF: AuthRequirement = { schemes: ['api_key', 'any_bearer'], scope: 'admin', refuse: firstPartyRefusal };
const STAFF_WRITES: AuthRequirement = { ...STAFF, refuse: (principal) => firstPartyRefusal(principal) ?? retiringRefusal(principal) };
const ClientRef = Type.Unsafe<Type.Static<typeof OAuthClient>>({ $ref: 'OAuthClient#' });

export const oauthClientRoutes: FastifyPluginAsyncTypebox<{ clients: OAuthClientService }> = async (app, { clients }) => {
  app.addSchema(OAuthClient);
  app.addSchema(CreatedOAuthClient);

  app.post('/oauth-clients', {
    config: { auth: STAFF_WRITES, idempotent: 'secret' },
    schema: {
      tags: ['oauth-clients'],
      operationId: 'registerOAuthClient',
      summary: 'Register an OAuth 2.0 client (staff)',
      description:
        'A confidential client gets a `clientSecret`, shown in this answer only and stored as a hash; a public client (single-page or native app) gets none and must use PKCE. ' +
        'Redirect URIs are matched exactly: https, or http on a loopback address (RFC 8252), never with a fragment. `refresh_token` comes with `authorization_code`; a public client cannot use `client_credentials`. ' +
        'Only staff\'s own credentials (an API key, a login token) manage clients: an OAuth access token is refused (403) on every /oauth-clients operation, and a retiring key (rolled, in its grace period) registers none.',
      body: OAuthClientInput,
      response: { 201: Type.Unsafe({ $ref: 'CreatedOAuthClient#' }), ...errorResponses(400, 401, 403, 409, 415, 422) },
    },
  }, async (request, reply) => {
    const client = await clients.register(request.body, principalOf(request).accountId);
    return reply.code(201).header('cache-control', 'no-store').header('location', `/v2/oauth-clients/${client.id}`).send(client);
  });

  app.get('/oauth-clients', {
    config: { auth: STAFF },
    schema: {
      tags: ['oauth-clients'],
      operationId: 'listOAuthClients',
      summary: 'The registered OAuth clients (staff; never their secrets)',
      description: 'Oldest first. An OAuth access token is refused (403).',
      response: { 200: Type.Object({ items: Type.Array(ClientRef) }), ...errorResponses(401, 403) },
    },
  }, async () => ({ items: await clients.list() }));

  app.delete('/oauth-clients/:id', {
    config: { auth: STAFF_WRITES },
    schema: {
      tags: ['oauth-clients'],
      operationId: 'deleteOAuthClient',
      summary: 'Remove an OAuth client (staff)',
      description: 'Its grants and their tokens go with it, and with them every webhook its tokens created. An OAuth access token, or a retiring key, is refused (403).',
      params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }),
      response: { 204: Type.Null({ description: 'Removed.' }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    await clients.delete(request.params.id);
    return reply.code(204).send(null);
  });
};
