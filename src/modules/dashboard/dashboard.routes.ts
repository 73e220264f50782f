import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, TooManyRequestsError } from '../../kernel/errors.js';
import { checkCsrf, registerPages } from '../../http/pages.js';
import { layoutOf, type DashboardContext } from './dashboard.context.js';
import { guardCredentialActions } from './credential-actions.js';
import { dashboardPath } from './local-path.js';
import { appRoutes } from './apps.routes.js';
import { eventRoutes } from './events.routes.js';
import { keyRoutes } from './keys.routes.js';
import { logRoutes } from './logs.routes.js';
import { oauthClientRoutes } from './oauth-clients.routes.js';
import { orderRoutes } from './orders.routes.js';
import { overviewRoutes } from './overview.routes.js';
import { webhookRoutes } from './webhooks.routes.js';

const VIEWS = new URL('./views', import.meta.url).pathname;
const require = createRequire(import.meta.url);

/** Served from memory with a version in the URL, so browsers may keep them. A Map: the name is the request's (`constructor` is no asset). */
function loadAssets(): ReadonlyMap<string, { type: string; body: Buffer }> {
  return new Map(Object.entries({
    'dashboard.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('./assets/dashboard.css', import.meta.url)) },
    'dashboard.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('./assets/dashboard.js', import.meta.url)) },
    'favicon.svg': { type: 'image/svg+xml', body: readFileSync(new URL('./assets/favicon.svg', import.meta.url)) },
    // Pinned to an exact version in package.json; served from node_modules, no CDN.
    'htmx.min.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(require.resolve('htmx.org/dist/htmx.min.js')) },
  }));
}

/** Where a signed-out visitor is sent: the sign-in, then back to the page asked for (same site only). */
export function signInLocation(request: FastifyRequest): string {
  const next = request.method === 'GET' ? dashboardPath(request.url) : '/dashboard';
  return `/dashboard/login?next=${encodeURIComponent(next)}`;
}

/**
 * The developer dashboard at /dashboard (issue 19): server-rendered pages (Eta), every action
 * a form answered with 303, htmx only swapping fragments. Its own sign-in in a cookie; the
 * pages call other modules' services with the session's principal, never /v2 over HTTP.
 */
export function dashboardRoutes(context: DashboardContext): FastifyPluginAsync {
  const { sessions, cookieName, secureCookies } = context;
  const assets = loadAssets();
  return async (app) => {
    await app.register(async (plain: FastifyInstance) => {
      const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
      await registerPages(scope, {
        views: VIEWS,
        secureCookies,
        csrfKeys: context.csrfKeys,
        sessionCookie: cookieName,
        resolveSession: (token) => sessions.resolve(token),
        cacheTemplates: context.cacheTemplates,
      });
      // Before any form's route: each is classed as it is registered (credential-actions.ts).
      const everyCredentialActionGuarded = guardCredentialActions(scope, context);
      scope.setErrorHandler((error, request, reply) => pageError(context, error as Error & { statusCode?: number; code?: string }, request, reply));
      scope.setNotFoundHandler((request, reply) => renderError(context, request, reply, 404, 'There is no such page.'));

      scope.get('/assets/:file', { config: { compressOnce: true }, schema: { params: Type.Object({ file: Type.String() }) } }, async (request, reply) => {
        const asset = assets.get(request.params.file);
        if (!asset) return renderError(context, request, reply, 404, 'There is no such file.');
        return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
      });

      scope.get('/login', { schema: { querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })) }) } }, async (request, reply) => {
        const next = dashboardPath(request.query.next);
        if (request.browserSession) return reply.redirect(next, 303);
        return reply.view('login', { ...layoutOf(context, request, reply, 'Sign in'), next });
      });
      const SignIn = Type.Object({ username: Type.String({ maxLength: 200 }), password: Type.String({ maxLength: 1000 }), next: Type.Optional(Type.String({ maxLength: 2000 })), _csrf: Type.String() });
      scope.post('/login', { schema: { body: SignIn }, preValidation: checkCsrf(scope) }, async (request, reply) => {
        const { username, password } = request.body;
        // Decided before a session exists: nothing after the sign-in may fail and leave it without its cookie.
        const next = dashboardPath(request.body.next);
        const outcome = await sessions.signIn(username.trim(), password, request.ip);
        if (!outcome.signedIn) {
          reply.code(401);
          return reply.view('login', { ...layoutOf(context, request, reply, 'Sign in'), next, username, error: 'Invalid username or password.' });
        }
        reply.startSession(outcome.token, outcome.session);
        return reply.redirect(next, 303);
      });
      scope.post('/logout', { preValidation: checkCsrf(scope) }, async (request, reply) => {
        if (request.browserSession) await sessions.signOut(request.browserSession);
        reply.endSession();
        return reply.redirect('/dashboard/login', 303);
      });

      // Every other page needs a sign-in: a visitor without one is sent to it.
      await scope.register(async (pages) => {
        pages.addHook('preHandler', async (request, reply) => {
          if (!request.browserSession) return reply.redirect(signInLocation(request), 303);
        });
        await pages.register(overviewRoutes(context));
        await pages.register(keyRoutes(context));
        await pages.register(webhookRoutes(context));
        await pages.register(eventRoutes(context));
        await pages.register(logRoutes(context));
        await pages.register(orderRoutes(context));
        await pages.register(appRoutes(context));
        await pages.register(oauthClientRoutes(context));
      });
      everyCredentialActionGuarded();
    }, { prefix: '/dashboard' });
  };
}

function renderError(context: DashboardContext, request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  reply.code(status);
  return reply.view('error', { ...layoutOf(context, request, reply, status === 404 ? 'Not found' : 'Something went wrong'), status, message });
}

/** Errors as pages: a domain error's own message, CSRF refusals and limits explained, 5xx details hidden. */
function pageError(context: DashboardContext, error: Error & { statusCode?: number; code?: string }, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof TooManyRequestsError) {
    reply.headers(error.headers);
    const seconds = Math.max(1, Math.ceil(Number(error.headers['retry-after'])));
    return renderError(context, request, reply, 429, `Too many attempts for now. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`);
  }
  if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
    return renderError(context, request, reply, 403, 'This form has expired or was not sent from this page. Reload the page and try again.');
  }
  if (error instanceof AppError) {
    reply.headers(error.headers);
    return renderError(context, request, reply, error.status, error.errors?.length ? `${error.message} ${error.errors.map((e) => `${e.field} ${e.message}`).join("; ")}.` : error.message);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return renderError(context, request, reply, status, 'The form was not understood: reload the page and try again.');
  request.log.error({ err: error }, 'dashboard page failed');
  return renderError(context, request, reply, 500, `Something went wrong on our side. Quote request id ${request.id} if you contact us.`);
}
