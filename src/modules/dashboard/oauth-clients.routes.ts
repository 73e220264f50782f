import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import { NotFoundError, ValidationFailedError, type FieldError } from '../../kernel/errors.js';
import { OAUTH_SCOPES, SCOPE_DESCRIPTIONS } from '../../kernel/scopes.js';
import { GRANTS, OAuthClientInput, type Grant, type OAuthClientService } from '../identity/identity.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { problemsOf } from './form-check.js';
import { listOf, when } from './format.js';
import { revealOnce, takeReveal } from './reveal.js';

const GRANT_DESCRIPTIONS: Record<Grant, string> = {
  authorization_code: 'A user signs in and consents; the app gets a code for tokens (with PKCE)',
  refresh_token: 'New tokens without asking the user again (comes with authorization_code)',
  client_credentials: 'The app acts as itself, as the account that registers it (confidential clients only)',
  implicit: 'A token straight in the redirect (legacy, Form A)',
};
const TYPES = { confidential: 'Confidential', public: 'Public' } as const;

/** What the registration form was sent with, kept to show it again with what is wrong. */
interface Draft {
  name: string;
  type: string;
  grants: string[];
  scopes: string[];
  redirectUris: string;
}
const EMPTY: Draft = { name: '', type: 'confidential', grants: [], scopes: [], redirectUris: '' };

type ClientInput = Parameters<OAuthClientService['register']>[0];

/**
 * The form as OAuthClientInput (the /v2 body schema, identity's) takes it, or what is wrong, in
 * the form's words: the rules are the schema's, the sentences name the form's fields.
 */
function inputOf(draft: Draft): { input: ClientInput } | { problems: string[] } {
  // One per line; white space never belongs in a URI, so spaces separate them too.
  const redirectUris = [...new Set(draft.redirectUris.split(/\s+/).filter(Boolean))];
  const input = { name: draft.name.trim(), type: draft.type, grants: [...new Set(draft.grants)], scopes: [...new Set(draft.scopes)], redirectUris };
  const words = (problem: FieldError): string => {
    switch (problem.field.split('.')[0]) {
      case 'name': return 'Name needs 1 to 100 characters, some of them visible.';
      case 'type': return 'Type must be Public or Confidential.';
      case 'grants': return input.grants.length === 0 ? 'Grants needs at least one: tick what the client may use.' : 'Grants holds an unknown grant.';
      case 'scopes': return input.scopes.length === 0 ? 'Scopes needs at least one: tick what the client may ask for.' : 'Scopes holds an unknown scope.';
      default: return `${labelled(problem, redirectUris)}.`;
    }
  };
  const problems = [...new Set(problemsOf(OAuthClientInput, input).map(words))];
  return problems.length > 0 ? { problems } : { input: input as ClientInput };
}

/** The service's field names (`redirectUris.0`) as the form labels them. */
function labelled(problem: FieldError, uris: string[]): string {
  const uri = /^redirectUris\.(\d+)$/.exec(problem.field);
  if (uri) return `Redirect URI ${uris[Number(uri[1])] ?? ''} ${problem.message}`;
  const names: Record<string, string> = { redirectUris: 'Redirect URIs', grants: 'Grants', scopes: 'Scopes', name: 'Name', type: 'Type' };
  return `${names[problem.field] ?? problem.field} ${problem.message}`;
}

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

/**
 * OAuth clients (issue 19, page 9), staff only: the registered clients, registering one (a
 * confidential client's secret shown once) and deleting one after a confirmation; through
 * OAuthClientService, as /v2/oauth-clients does.
 */
export function oauthClientRoutes(context: DashboardContext): FastifyPluginAsyncTypebox {
  const { oauthClients, clock } = context;
  return async (scope) => {
    const csrf = checkCsrf(scope);
    // Customers register no clients: the section is not theirs (404), before any form is judged.
    scope.addHook('onRequest', async (request) => {
      if (request.browserSession && request.browserSession.role !== 'admin') throw new NotFoundError('There is no such page.');
    });

    scope.get('/oauth-clients', async (request, reply) => {
      const reveal = await takeReveal(context, request, reply);
      const now = clock.now();
      const clients = (await oauthClients.list()).map((client) => ({
        ...client,
        typeName: TYPES[client.type],
        created: when(client.createdAt, now),
      }));
      return reply.view('oauth-clients', { ...layoutOf(context, request, reply, 'OAuth clients', 'oauth-clients'), clients, ...reveal });
    });

    const formPage = (request: FastifyRequest, reply: FastifyReply, draft: Draft, errors: string[] = []) => {
      if (errors.length > 0) reply.code(422);
      return reply.view('oauth-client-new', {
        ...layoutOf(context, request, reply, 'Register client', 'oauth-clients'),
        draft,
        errors,
        types: Object.entries(TYPES).map(([value, label]) => ({ value, label, checked: draft.type === value })),
        grants: GRANTS.map((name) => ({ name, id: `grant-${name.replaceAll('_', '-')}`, description: GRANT_DESCRIPTIONS[name], checked: draft.grants.includes(name) })),
        scopes: OAUTH_SCOPES.map((name) => ({ name, id: `scope-${name.replace(':', '-')}`, description: SCOPE_DESCRIPTIONS[name], checked: draft.scopes.includes(name) })),
      });
    };
    scope.get('/oauth-clients/new', async (request, reply) => formPage(request, reply, EMPTY));

    const RegisterForm = Type.Object({
      _csrf: Type.String(),
      name: Type.String({ maxLength: 1000 }),
      type: Type.Optional(Type.String({ maxLength: 20 })),
      grants: Type.Optional(Type.Unknown()),
      scopes: Type.Optional(Type.Unknown()),
      redirectUris: Type.Optional(Type.String({ maxLength: 30_000 })),
    });
    scope.post('/oauth-clients', { schema: { body: RegisterForm }, preValidation: csrf }, async (request, reply) => {
      const { body } = request;
      const draft: Draft = { name: body.name, type: body.type ?? '', grants: listOf(body.grants), scopes: listOf(body.scopes), redirectUris: body.redirectUris ?? '' };
      const judged = inputOf(draft);
      if ('problems' in judged) return formPage(request, reply, draft, judged.problems);
      let created;
      try {
        created = await oauthClients.register(judged.input, sessionOf(request).accountId);
      } catch (error) {
        if (!(error instanceof ValidationFailedError)) throw error;
        return formPage(request, reply, draft, (error.errors ?? []).map((p) => `${labelled(p, judged.input.redirectUris)}.`));
      }
      if (created.clientSecret !== null) {
        await revealOnce(context, request, reply, { label: `The secret of "${created.name}"`, secret: created.clientSecret, note: `Its client ID is ${created.clientId}. The secret is stored only as a hash: if it is lost, register the client again.` });
      }
      return reply.redirect('/dashboard/oauth-clients', 303);
    });

    const clientOf = async (id: number) => {
      const client = (await oauthClients.list()).find((each) => Number(each.id) === id);
      if (!client) throw new NotFoundError(`OAuth client ${id} not found.`);
      return client;
    };
    const deletePage = (client: { id: number; name: string; clientId: string }) => ({
      title: 'Delete client',
      question: `Delete the OAuth client "${client.name}" (${client.clientId})? Its grants and tokens go with it: every application using it is refused from then on.`,
      action: `/dashboard/oauth-clients/${client.id}/delete`,
      cancel: '/dashboard/oauth-clients',
    });
    scope.get('/oauth-clients/:id/delete', { schema: { params: IdParams } }, async (request, reply) =>
      reply.view('confirm', { ...layoutOf(context, request, reply, 'Delete client', 'oauth-clients'), ...deletePage(await clientOf(request.params.id)), hidden: [], stepUp: false }),
    );
    scope.post('/oauth-clients/:id/delete', { schema: { params: IdParams, body: Type.Object({ _csrf: Type.String() }) }, preValidation: csrf }, async (request, reply) => {
      await oauthClients.delete(request.params.id);
      return reply.redirect('/dashboard/oauth-clients', 303);
    });
  };
}
