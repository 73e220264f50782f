import { readFileSync } from 'node:fs';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { checkCsrf, PAGE_CSP, registerPages } from '../../http/pages.js';
import { TooManyRequestsError } from '../../kernel/errors.js';
import { SCOPE_DESCRIPTIONS } from '../../kernel/scopes.js';
import type { Keys } from '../../kernel/key-ring.js';
import type { BrowserSessionService } from '../identity/identity.module.js';
import { AUTHORIZATION_PARAMS, type AuthorizationParams } from './oauth.rules.js';
import type { AuthorizeStep, SignInForm, SignInService } from './oauth-signin.service.js';

const VIEWS = new URL('./views', import.meta.url).pathname;

export interface OAuthPagesOptions {
  signIn: SignInService;
  sessions: BrowserSessionService;
  /** The key ring's 'page-csrf' keys. */
  csrfKeys: Keys;
  secureCookies: boolean;
  /** The one sign-in's cookie (the dashboard's). */
  sessionCookie: string;
  cacheTemplates: boolean;
}

/** The page CSP, with the client's origin added to form-action: the consent form's answer is a redirect there. */
function cspAllowingFormsTo(origin: string): string {
  const directives: Record<string, string[]> = { ...PAGE_CSP, formAction: [...PAGE_CSP.formAction, origin] };
  return Object.entries(directives)
    .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
    .join(';');
}

/** Only single text values: a parameter sent twice, or not as text, is absent (and the request judged without it). */
function authorizationParams(source: Record<string, unknown>): AuthorizationParams {
  const params: AuthorizationParams = {};
  for (const name of AUTHORIZATION_PARAMS) {
    const value = source[name];
    if (typeof value === 'string' && value !== '') params[name] = value;
  }
  return params;
}

/**
 * The authorization endpoint's pages (decisions.md §6, issue 19) on the page machinery the
 * dashboard uses: one sign-in serves both, so a browser signed in to the dashboard goes
 * straight to consent, and signing in here signs in to the dashboard too.
 */
export function oauthPageRoutes(options: OAuthPagesOptions): FastifyPluginAsync {
  const { signIn, sessions } = options;
  const stylesheet = readFileSync(new URL('./assets/oauth.css', import.meta.url));
  return async (app) => {
    await app.register(async (scope: FastifyInstance) => {
      await registerPages(scope, {
        views: VIEWS,
        secureCookies: options.secureCookies,
        csrfKeys: options.csrfKeys,
        sessionCookie: options.sessionCookie,
        resolveSession: (token) => sessions.resolve(token),
        cacheTemplates: options.cacheTemplates,
      });

      const formView = (form: SignInForm, reply: FastifyReply, extra: Record<string, string> = {}) => ({
        clientName: form.clientName,
        scopes: form.scopes.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })),
        csrf: reply.csrfToken(),
        hidden: [
          ...AUTHORIZATION_PARAMS.flatMap((name) => (form.params[name] === undefined ? [] : [{ name, value: form.params[name]! }])),
          ...Object.entries(extra).map(([name, value]) => ({ name, value })),
        ],
      });
      const errorPage = (reply: FastifyReply, status: number, message: string, heading = 'This authorization request cannot be served') =>
        reply.code(status).view('error', { title: 'Authorization failed', heading, message, advice: 'Return to the application and start again.' });

      const answer = (request: FastifyRequest, reply: FastifyReply, step: AuthorizeStep) => {
        switch (step.show) {
          case 'error':
            return errorPage(reply, step.status, step.message);
          case 'login':
            if (step.headers) reply.headers(step.headers);
            reply.header('content-security-policy', cspAllowingFormsTo(step.redirectOrigin));
            return reply.code(step.status).view('login', { title: 'Sign in', ...formView(step.form, reply, { step: 'login' }), error: step.error });
          case 'consent':
            if (step.newSession) reply.startSession(step.newSession.token, step.newSession.session);
            reply.header('content-security-policy', cspAllowingFormsTo(step.redirectOrigin));
            return reply.code(200).view('consent', { title: 'Allow access?', ...formView(step.form, reply, { step: 'consent', interaction: step.form.interaction }), username: step.form.username });
          case 'redirect':
            return reply.redirect(step.location, request.method === 'GET' ? 302 : 303);
        }
      };

      // A browser is on these pages: a limit (the address's bucket, before the handler), a
      // refused CSRF token or a form that cannot be read is answered with a page, never JSON.
      scope.setErrorHandler((error: FastifyError, _request, reply) => {
        if (error instanceof TooManyRequestsError) {
          reply.headers(error.headers);
          const seconds = Math.max(1, Math.ceil(Number(error.headers['retry-after'])));
          const wait = seconds < 120 ? `${seconds} second${seconds === 1 ? '' : 's'}` : `${Math.ceil(seconds / 60)} minutes (${seconds} seconds)`;
          return reply.code(429).view('error', { title: 'Too many requests', heading: 'Too many requests', message: `Too many requests came from your address for now. Try again in ${wait}.`, advice: 'Then return to the application and start again, or reload this page.' });
        }
        if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
          return errorPage(reply, 403, 'This form has expired or was not sent from this page (cookies must be enabled). Start again from the application.');
        }
        if ((error.statusCode ?? 500) < 500) return errorPage(reply, error.statusCode ?? 400, 'Submit the form from the sign-in page.');
        throw error;
      });

      scope.get('/oauth/assets/oauth.css', async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(stylesheet));

      scope.get('/oauth/authorize', async (request, reply) =>
        answer(request, reply, await signIn.authorize({ params: authorizationParams(request.query as Record<string, unknown>), session: request.browserSession, ip: request.ip })),
      );
      scope.post('/oauth/authorize', { preValidation: checkCsrf(scope) }, async (request, reply) => {
        const body = request.body as Record<string, unknown> | undefined;
        if (!body || typeof body !== 'object') return errorPage(reply, 415, 'Submit the form from the sign-in page.');
        const repeated = Object.keys(body).filter((name) => Array.isArray(body[name]));
        if (repeated.length > 0) return errorPage(reply, 400, `Each parameter may be sent once: ${repeated.join(', ')}.`);
        const fields = Object.fromEntries(Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
        return answer(request, reply, await signIn.authorize({ params: authorizationParams(fields), fields, session: request.browserSession, ip: request.ip }));
      });
    });
  };
}
