import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import { NotFoundError } from '../../kernel/errors.js';
import { SCOPE_DESCRIPTIONS } from '../../kernel/scopes.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { when } from './format.js';

const ClientParams = Type.Object({ clientId: Type.String({ pattern: '^cl_[A-Za-z0-9_-]{1,64}$' }) });

/**
 * Authorized apps (issue 19, page 8), customers only: the OAuth applications the account gave
 * access to, their scopes and last use; Revoke (after a confirmation) ends the grants and every
 * token at once, as DELETE /v2/customer/{username}/authorized-apps/{clientId} does.
 */
export function appRoutes(context: DashboardContext): FastifyPluginAsyncTypebox {
  const { grants, clock } = context;
  return async (scope) => {
    const csrf = checkCsrf(scope);
    // Staff authorize no one's apps here: the section is not theirs (404), before any form is judged.
    scope.addHook('onRequest', async (request) => {
      if (request.browserSession?.role === 'admin') throw new NotFoundError('There is no such page.');
    });

    const appsOf = async (request: FastifyRequest) => {
      const now = clock.now();
      return (await grants.listFor(sessionOf(request).accountId)).map((app) => ({
        ...app,
        scopeList: app.scopes.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })),
        authorized: when(app.authorizedAt, now),
        lastUsed: when(app.lastUsedAt, now, 'Never'),
      }));
    };

    scope.get('/apps', async (request, reply) =>
      reply.view('apps', { ...layoutOf(context, request, reply, 'Authorized apps', 'apps'), apps: await appsOf(request) }),
    );

    const appOf = async (request: FastifyRequest, clientId: string) => {
      const app = (await appsOf(request)).find((each) => each.clientId === clientId);
      if (!app) throw new NotFoundError('No such authorized app on your account.');
      return app;
    };
    const revokePage = (app: { clientId: string; name: string }) => ({
      title: 'Revoke access',
      question: `Revoke the access of "${app.name}" (${app.clientId}) to your account? Its tokens stop working at once, and it has to ask for your consent again.`,
      action: `/dashboard/apps/${app.clientId}/revoke`,
      cancel: '/dashboard/apps',
    });
    scope.get('/apps/:clientId/revoke', { schema: { params: ClientParams } }, async (request, reply) =>
      reply.view('confirm', { ...layoutOf(context, request, reply, 'Revoke access', 'apps'), ...revokePage(await appOf(request, request.params.clientId)), hidden: [], stepUp: false }),
    );
    scope.post('/apps/:clientId/revoke', { schema: { params: ClientParams, body: Type.Object({ _csrf: Type.String() }) }, preValidation: csrf }, async (request, reply) => {
      const { clientId } = request.params;
      await grants.revoke(sessionOf(request).accountId, clientId);
      return reply.redirect('/dashboard/apps', 303);
    });
  };
}
