import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { NotFoundError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import { ownAccountOnly } from '../customers/customers.module.js';
import type { AccountService } from '../identity/identity.module.js';
import { AuthorizedApp } from './oauth-grant.schema.js';
import type { OAuthGrantService } from './oauth-grant.service.js';

/**
 * The account holder's own credentials only: an API key (X-API-Key or bearer) or a login token.
 * A third-party application's OAuth token is refused (401): no app may list the others, nor
 * revoke another's access (or keep its own by hiding it from the account holder).
 */
const READ_APPS: AuthRequirement = { schemes: ['api_key', 'bearer_auth'], scope: 'read:profile' };
const REVOKE_APPS: AuthRequirement = { schemes: ['api_key', 'bearer_auth'], scope: 'write:profile' };
const ACCESS =
  'Only the account holder\'s own credentials are taken (an API key, or a login token): an OAuth access token is refused (401), so no application lists or revokes authorizations. ' +
  'A customer reaches only their own account (any other username is 403); staff reach every customer (a username that is no customer is 404).';

const Username = Type.String({ pattern: '^[A-Za-z0-9_.-]{3,64}$', examples: ['marie.dupont'] });
const ClientId = Type.String({ pattern: '^cl_[A-Za-z0-9_-]{1,64}$', description: 'The application\'s `client_id`.' });
const AppRef = Type.Unsafe<Type.Static<typeof AuthorizedApp>>({ $ref: 'AuthorizedApp#' });

/** The account whose authorizations are asked for: the caller's own, or (staff) any customer's. */
async function accountOf(accounts: AccountService, principal: Principal, username: string): Promise<number> {
  if (principal.role !== 'admin') return principal.accountId; // ownAccountOnly: a customer's path names them
  const account = await accounts.findByUsername(username);
  if (!account || account.role !== 'customer') throw new NotFoundError(`Customer ${username} not found.`);
  return Number(account.id);
}

/** The OAuth applications a customer authorized (API parity with the dashboard's "Authorized apps"). */
export const grantRoutes: FastifyPluginAsyncTypebox<{ grants: OAuthGrantService; accounts: AccountService }> = async (app, { grants, accounts }) => {
  app.addSchema(AuthorizedApp);

  app.get('/customer/:username/authorized-apps', {
    preValidation: ownAccountOnly,
    config: { auth: READ_APPS },
    schema: {
      tags: ['customer'],
      operationId: 'listAuthorizedApps',
      summary: 'The OAuth applications the customer authorized, with their scopes and last use',
      description: `Those with access now (a grant not revoked, holding a token still usable), one entry per application, by name. ${ACCESS}`,
      params: Type.Object({ username: Username }),
      response: { 200: Type.Object({ items: Type.Array(AppRef) }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const accountId = await accountOf(accounts, principalOf(request), request.params.username);
    return reply.header('cache-control', 'no-store').send({ items: await grants.listFor(accountId) });
  });

  app.delete('/customer/:username/authorized-apps/:clientId', {
    preValidation: ownAccountOnly,
    config: { auth: REVOKE_APPS },
    schema: {
      tags: ['customer'],
      operationId: 'revokeAuthorizedApp',
      summary: 'Revoke an application\'s access to the customer\'s account',
      description: `Revokes at once every grant the customer gave the application and every token issued under them (access and refresh tokens, pending codes): they are refused from then on (on other instances within AUTH_CACHE_TTL_MS). The application must ask for consent again. 404 when it holds no grant of this account. ${ACCESS}`,
      params: Type.Object({ username: Username, clientId: ClientId }),
      response: { 204: Type.Null({ description: 'Revoked.' }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    await grants.revoke(await accountOf(accounts, principalOf(request), request.params.username), request.params.clientId);
    return reply.code(204).send(null);
  });
};
