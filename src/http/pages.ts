import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import csrfProtection from '@fastify/csrf-protection';
import CsrfTokens from '@fastify/csrf';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { BrowserSession } from '../kernel/browser-session.js';
import { ForbiddenError } from '../kernel/errors.js';
import type { Keys } from '../kernel/key-ring.js';

/**
 * The machinery of every page a browser is shown (the dashboard, the OAuth sign-in and
 * consent): cookies, form bodies, Eta templates (escaping by default), security headers,
 * the one sign-in's session cookie, CSRF tokens bound to that session, and cross-site unsafe
 * requests refused. Registered inside each page module's plugin scope, so /v2 never parses a
 * cookie or a form.
 */
export interface PagesOptions {
  /** Where the scope's templates are (`.eta`). */
  views: string;
  /** PUBLIC_URL is https: cookies are Secure. */
  secureCookies: boolean;
  /** The key ring's 'page-csrf' keys: tokens are made with the current one (so any instance checks another's), accepted under any. */
  csrfKeys: Keys;
  /** The session cookie's name; the CSRF secret's is this with `_csrf`. */
  sessionCookie: string;
  /** The session a cookie value opens, if any. */
  resolveSession: (token: string | undefined) => Promise<BrowserSession | undefined>;
  /** Templates are read once (production); otherwise on every render. */
  cacheTemplates: boolean;
}

/** The policy every page is served with: no inline script or style, nothing framed, forms to this origin. */
export const PAGE_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
};

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyRequest {
    /** The sign-in this request carries, if any (page routes only: /v2 never reads the cookie). */
    browserSession: BrowserSession | null;
  }
  interface FastifyReply {
    /** The CSRF token for the forms of this page, bound to the session (or to being signed out). */
    csrfToken(): string;
    /** Gives the browser a new sign-in's cookie; this request acts as it from now on. */
    startSession(token: string, session: BrowserSession): void;
    /** Clears the sign-in's cookie. */
    endSession(): void;
  }
  interface FastifyInstance {
    /** Whether the request's CSRF token was made under a previous APP_SECRET's key (an open form across a rotation). */
    csrfUnderPreviousKey(request: FastifyRequest): boolean;
  }
}

/** What a CSRF token is bound to: the session, or a constant before sign-in (the sign-in form's own token). */
const csrfBinding = (request: FastifyRequest) => (request.browserSession ? `session:${request.browserSession.id}` : 'signed-out');

/** The library's tokens made with userInfo (its call signature's return type names only the simple ones). */
interface UserInfoTokens {
  verify(secret: string, token: string, userInfo: string): boolean;
}

/** Where a form's token is: the plugin's own default places (the form field, then the usual headers). */
const csrfTokenOf = (request: FastifyRequest): string | undefined => {
  const body = request.body as { _csrf?: unknown } | undefined;
  const headers = request.headers;
  const token = (typeof body?._csrf === 'string' ? body._csrf : undefined) || headers['csrf-token'] || headers['xsrf-token'] || headers['x-csrf-token'] || headers['x-xsrf-token'];
  return typeof token === 'string' ? token : undefined;
};

export async function registerPages(scope: FastifyInstance, options: PagesOptions): Promise<void> {
  const sessionCookie = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: options.secureCookies };
  // Pages are not API operations: none is in the OpenAPI document.
  scope.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await scope.register(cookie);
  await scope.register(formbody, { bodyLimit: 64 * 1024 });
  await scope.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: PAGE_CSP },
    referrerPolicy: { policy: 'same-origin' },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: options.secureCookies,
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
  await scope.register(csrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: `${options.sessionCookie}_csrf`,
    cookieOpts: sessionCookie,
    csrfOpts: { hmacKey: options.csrfKeys.current },
    getToken: csrfTokenOf,
    getUserInfo: csrfBinding,
  });
  // The same tokens under each previous key: a form shown before APP_SECRET was rotated still posts.
  const previous = options.csrfKeys.all.slice(1).map((hmacKey) => CsrfTokens({ userInfo: true, hmacKey }) as unknown as UserInfoTokens);
  const cookieKey = `${options.sessionCookie}_csrf`;
  scope.decorate('csrfUnderPreviousKey', (request: FastifyRequest) => {
    const secret = request.cookies[cookieKey];
    const token = csrfTokenOf(request);
    if (!secret || !token) return false;
    return previous.some((tokens) => tokens.verify(secret, token, csrfBinding(request)));
  });
  await scope.register(view, {
    engine: { eta: new Eta({ views: options.views, cache: options.cacheTemplates, autoEscape: true, autoTrim: [false, 'nl'] }) },
    templates: options.views,
    viewExt: 'eta',
  });

  scope.decorateRequest('browserSession', null);
  scope.decorateReply('csrfToken', function (this: FastifyReply) {
    // Refused before this scope's hooks ran (request-guards.ts: two Authorization lines, an
    // undecodable URL): no cookie was parsed, so the error page gets no token, not a 500.
    if ((this.request.cookies as unknown) == null) return '';
    return this.generateCsrf({ userInfo: csrfBinding(this.request) });
  });
  scope.decorateReply('startSession', function (this: FastifyReply, token: string, session: BrowserSession) {
    this.setCookie(options.sessionCookie, token, sessionCookie);
    this.request.browserSession = session;
  });
  scope.decorateReply('endSession', function (this: FastifyReply) {
    this.clearCookie(options.sessionCookie, sessionCookie);
  });

  // Fetch Metadata: a browser says when another site sent it. The CSRF token refuses such a
  // request anyway; this refuses it before the session or the body are looked at.
  scope.addHook('onRequest', (request, _reply, done) => {
    if (UNSAFE.has(request.method) && request.headers['sec-fetch-site'] === 'cross-site') {
      done(new ForbiddenError('This form was sent from another site: open the page here and send it again.'));
      return;
    }
    done();
  });
  scope.addHook('onRequest', async (request) => {
    request.browserSession = (await options.resolveSession(request.cookies[options.sessionCookie])) ?? null;
  });
  scope.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('cache-control', 'private, no-store');
    // The page's time on the server (what `npm run bench:dashboard` reads; browsers show it in their tools).
    reply.header('server-timing', `app;dur=${reply.elapsedTime.toFixed(1)}`);
    done(null, payload);
  });
}

/** Checks the request's CSRF token (the preValidation of every unsafe page route, so a form without one is 403 before its fields are judged). */
export function checkCsrf(scope: FastifyInstance) {
  const check = scope.csrfProtection.bind(scope);
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    // The plugin answers a refusal through reply.send: asked first whether a previous key made the token.
    const refusing = Object.create(reply, {
      send: { value: (error: unknown) => (scope.csrfUnderPreviousKey(request) ? done() : reply.send(error)) },
    }) as FastifyReply;
    check(request, refusing, done);
  };
}
