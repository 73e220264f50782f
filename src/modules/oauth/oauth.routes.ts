import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../../kernel/errors.js';
import { SCOPES } from '../../kernel/scopes.js';
import { cookieValue, CSRF_COOKIE } from './oauth.interaction.js';
import { consentPage, errorPage, limitPage, loginPage, STYLESHEET } from './oauth.pages.js';
import { AUTHORIZATION_PARAMS, type AuthorizationParams } from './oauth.rules.js';
import { protocolError, type AuthorizationServer, type ProtocolResponse } from './oauth.service.js';
import type { AuthorizeOutcome, SignInService } from './oauth-signin.service.js';

/** A form body: each parameter once (RFC 6749 §3.1), or the names given more than once. */
interface FormBody {
  values: Record<string, string>;
  repeated: string[];
}

function parseForm(text: string): FormBody {
  const values: Record<string, string> = {};
  const repeated: string[] = [];
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(values, name)) repeated.push(name);
    else values[name] = value;
  }
  return { values, repeated };
}

function authorizationParams(source: Record<string, unknown>): AuthorizationParams {
  const params: AuthorizationParams = {};
  for (const name of AUTHORIZATION_PARAMS) {
    const value = source[name];
    if (typeof value === 'string' && value !== '') params[name] = value;
  }
  return params;
}

/** RFC 6749 §2.3.1: Basic credentials are form-encoded before base64. */
function basicCredentials(header: string | undefined): { clientId: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const unescape = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '));
  try {
    return { clientId: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

function sendProtocol(reply: FastifyReply, response: ProtocolResponse): FastifyReply {
  reply.code(response.status).headers(response.headers);
  return response.body === undefined ? reply.send() : reply.type('application/json').send(JSON.stringify(response.body));
}

/** The token and revocation endpoints take each parameter once, form-encoded: why a body is refused. */
function formRefusal(form: FormBody | undefined): ProtocolResponse {
  if (!form) return protocolError(400, 'invalid_request', 'Send the parameters as application/x-www-form-urlencoded.');
  return protocolError(400, 'invalid_request', `Each parameter may be sent once: ${form.repeated.join(', ')}.`);
}

/**
 * The authorization server's endpoints at the service root (decisions.md §6): the metadata,
 * the authorization endpoint with its login and consent pages, the token and revocation
 * endpoints. Pages carry a strict CSP: no script at all, styles from this origin, forms only
 * to this origin and, for the redirect that ends the flow, the client's.
 */
export function oauthRoutes(options: { server: AuthorizationServer; signIn: SignInService; secureCookies: boolean }): FastifyPluginAsync {
  const { server, signIn } = options;
  return async (app) => {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, parseForm(String(body))));

    app.get('/.well-known/oauth-authorization-server', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=3600');
      return server.metadata(SCOPES);
    });

    app.get('/oauth/assets/oauth.css', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET),
    );

    const html = (reply: FastifyReply, status: number, body: string, redirectOrigin?: string) =>
      reply
        .code(status)
        .type('text/html; charset=utf-8')
        .headers({
          'content-security-policy': `default-src 'none'; style-src 'self'; form-action 'self'${redirectOrigin ? ` ${redirectOrigin}` : ''}; frame-ancestors 'none'; base-uri 'none'`,
          'x-frame-options': 'DENY',
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
          'x-content-type-options': 'nosniff',
        })
        .send(body);

    const answer = (request: FastifyRequest, reply: FastifyReply, outcome: AuthorizeOutcome) => {
      if (outcome.newCsrfCookie) reply.header('set-cookie', `${CSRF_COOKIE}=${outcome.newCsrfCookie}; Path=/oauth; HttpOnly; SameSite=Lax${options.secureCookies ? '; Secure' : ''}`);
      switch (outcome.show) {
        case 'error':
          return html(reply, outcome.status, errorPage(outcome.message));
        case 'login':
          if (outcome.headers) reply.headers(outcome.headers);
          return html(reply, outcome.status, loginPage(outcome.form, outcome.error), outcome.redirectOrigin);
        case 'consent':
          return html(reply, 200, consentPage(outcome.form), outcome.redirectOrigin);
        case 'redirect':
          return reply.header('cache-control', 'no-store').redirect(outcome.location, request.method === 'GET' ? 302 : 303);
      }
    };

    const authorize = async (request: FastifyRequest, reply: FastifyReply, source: Record<string, unknown>, form: FormBody | undefined) => {
      const params = authorizationParams(source);
      if (form && form.repeated.length > 0) return html(reply, 400, errorPage(`Each parameter may be sent once: ${form.repeated.join(', ')}.`));
      return answer(request, reply, await signIn.authorize({ params, fields: form?.values, csrfCookie: cookieValue(request.headers.cookie, CSRF_COOKIE), ip: request.ip }));
    };

    // A browser is on these pages: a rate limit reached before the handler (the address's
    // bucket) is answered with a page saying when to come back, never the API's JSON error.
    // Anything else goes on to the app's error handler.
    const pageErrors = (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      if (!(error instanceof TooManyRequestsError)) throw error;
      reply.headers(error.headers);
      return html(reply, 429, limitPage(Number(error.headers['retry-after'])));
    };
    const page = { config: { auth: 'public' as const }, schema: { hide: true }, errorHandler: pageErrors };

    app.get('/oauth/authorize', page, async (request, reply) =>
      authorize(request, reply, request.query as Record<string, unknown>, undefined),
    );
    app.post('/oauth/authorize', page, async (request, reply) => {
      const form = request.body as FormBody | undefined;
      if (!form?.values) return html(reply, 415, errorPage('Submit the form from the sign-in page.'));
      return authorize(request, reply, form.values, form);
    });

    const formOf = (request: FastifyRequest): FormBody | undefined => (request.body as FormBody | undefined)?.values ? (request.body as FormBody) : undefined;

    app.post('/oauth/token', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
      const form = formOf(request);
      if (!form || form.repeated.length > 0) return sendProtocol(reply, formRefusal(form));
      // The library checks the media type as type-is does, which needs a declared body.
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(request.headers['content-length'] ?? 1) };
      const basic = basicCredentials(request.headers.authorization);
      if (request.headers.authorization) {
        // The library reads Basic credentials without undoing their form-encoding (RFC 6749 §2.3.1): hand it them decoded.
        headers.authorization = basic ? `Basic ${Buffer.from(`${basic.clientId}:${basic.secret}`).toString('base64')}` : request.headers.authorization;
      }
      return sendProtocol(reply, await server.token({ ip: request.ip, clientId: basic?.clientId ?? form.values.client_id, headers, body: form.values }));
    });

    app.post('/oauth/revoke', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
      const form = formOf(request);
      if (!form || form.repeated.length > 0) return sendProtocol(reply, formRefusal(form));
      const basic = basicCredentials(request.headers.authorization);
      const { client_id, client_secret, token } = form.values;
      return sendProtocol(reply, await server.revoke({ clientId: basic?.clientId ?? client_id, secret: basic?.secret ?? client_secret, token, sentAuthorization: Boolean(request.headers.authorization) }));
    });
  };
}
