import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { BruteForceGuard } from '../../kernel/brute-force.js';
import { TooManyRequestsError } from '../../kernel/errors.js';
import { SCOPES } from '../../kernel/scopes.js';
import { cookieValue, CSRF_COOKIE, InteractionSigner } from './oauth.interaction.js';
import { consentPage, errorPage, loginPage, STYLESHEET } from './oauth.pages.js';
import { AUTHORIZATION_PARAMS, type AuthorizationParams } from './oauth.rules.js';
import type { AuthorizationServer, ProtocolResponse } from './oauth.service.js';
import type { OAuthTokenRepository } from './oauth-token.repository.js';

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

function protocolError(status: number, error: string, description: string): ProtocolResponse {
  return { status, headers: { 'cache-control': 'no-store' }, body: { error, error_description: description } };
}

/**
 * The authorization server's endpoints at the service root (decisions.md §6): the metadata,
 * the authorization endpoint with its login and consent pages, the token and revocation
 * endpoints. Pages carry a strict CSP: no script at all, styles from this origin, forms only
 * to this origin and, for the redirect that ends the flow, the client's.
 */
export function oauthRoutes(options: { server: AuthorizationServer; signer: InteractionSigner; tokens: OAuthTokenRepository; secureCookies: boolean; bruteForce: BruteForceGuard }): FastifyPluginAsync {
  const { server, signer, tokens, bruteForce } = options;
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

    const csrfCookie = (request: FastifyRequest, reply: FastifyReply): string => {
      const existing = cookieValue(request.headers.cookie, CSRF_COOKIE);
      if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
      const value = InteractionSigner.newCookieValue();
      reply.header('set-cookie', `${CSRF_COOKIE}=${value}; Path=/oauth; HttpOnly; SameSite=Lax${options.secureCookies ? '; Secure' : ''}`);
      return value;
    };

    const authorize = async (request: FastifyRequest, reply: FastifyReply, source: Record<string, unknown>, form: FormBody | undefined) => {
      const params = authorizationParams(source);
      if (form && form.repeated.length > 0) return html(reply, 400, errorPage(`Each parameter may be sent once: ${form.repeated.join(', ')}.`));
      const { verdict, client } = await server.judge(params);
      if (verdict.outcome === 'refuse' || !client) return html(reply, 400, errorPage(verdict.outcome === 'refuse' ? verdict.description : 'Unknown client.'));
      const redirectOrigin = new URL(verdict.redirectUri).origin;
      const redirect = (location: string) => reply.header('cache-control', 'no-store').redirect(location, request.method === 'GET' ? 302 : 303);
      if (verdict.outcome === 'redirect_error') return redirect(server.errorLocation(verdict.redirectUri, verdict.responseMode, verdict.error, verdict.description, params.state));
      const mode = verdict.responseType === 'token' ? 'fragment' : 'query';
      const cookie = csrfCookie(request, reply);
      const context = { clientName: client.name, scopes: verdict.scopes, params, csrf: signer.csrfField(cookie) };
      if (!form) return html(reply, 200, loginPage(context), redirectOrigin);

      const fields = form.values;
      if (!signer.csrfMatches(cookieValue(request.headers.cookie, CSRF_COOKIE), fields.csrf_token)) {
        return html(reply, 403, errorPage('This form has expired or was not sent from this page (cookies must be enabled). Start again from the application.'));
      }
      if (fields.step === 'login') {
        let attempt;
        try {
          attempt = await bruteForce('login', request.ip, fields.username);
        } catch (error) {
          if (!(error instanceof TooManyRequestsError)) throw error;
          reply.headers(error.headers);
          return html(reply, 429, loginPage(context, error.message), redirectOrigin);
        }
        const user = fields.username && fields.password ? await server.verifyLogin(fields.username, fields.password) : undefined;
        if (!user) return html(reply, 401, loginPage(context, 'Invalid username or password.'), redirectOrigin);
        await attempt.succeeded();
        const granted = server.scopesForUser(params, client, user.role);
        if ('problem' in granted) return redirect(server.errorLocation(verdict.redirectUri, mode, 'invalid_scope', granted.problem, params.state));
        const interaction = await signer.consentToken(user.id, params, cookie);
        return html(reply, 200, consentPage({ ...context, scopes: granted.scopes, username: user.username, interaction }), redirectOrigin);
      }
      if (fields.step === 'consent') {
        const accountId = await signer.consentingAccount(fields.interaction, params, cookie);
        const user = accountId === undefined ? undefined : await tokens.accountById(accountId);
        if (!user) return html(reply, 403, errorPage('This consent form has expired or is not yours. Start again from the application.'));
        if (fields.decision !== 'approve') return redirect(server.errorLocation(verdict.redirectUri, mode, 'access_denied', 'The user denied access.', params.state));
        const granted = server.scopesForUser(params, client, user.role);
        if ('problem' in granted) return redirect(server.errorLocation(verdict.redirectUri, mode, 'invalid_scope', granted.problem, params.state));
        return redirect(await server.approve(user, client, verdict, granted.scopes, params));
      }
      return html(reply, 400, errorPage('The form is incomplete. Start again from the application.'));
    };

    app.get('/oauth/authorize', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) =>
      authorize(request, reply, request.query as Record<string, unknown>, undefined),
    );
    app.post('/oauth/authorize', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
      const form = request.body as FormBody | undefined;
      if (!form?.values) return html(reply, 415, errorPage('Submit the form from the sign-in page.'));
      return authorize(request, reply, form.values, form);
    });

    const formOf = (request: FastifyRequest): FormBody | undefined => (request.body as FormBody | undefined)?.values ? (request.body as FormBody) : undefined;

    app.post('/oauth/token', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
      const form = formOf(request);
      if (!form) return sendProtocol(reply, protocolError(400, 'invalid_request', 'Send the parameters as application/x-www-form-urlencoded.'));
      if (form.repeated.length > 0) return sendProtocol(reply, protocolError(400, 'invalid_request', `Each parameter may be sent once: ${form.repeated.join(', ')}.`));
      // The library checks the media type as type-is does, which needs a declared body.
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(request.headers['content-length'] ?? 1) };
      if (request.headers.authorization) {
        // The library reads Basic credentials without undoing their form-encoding (RFC 6749 §2.3.1): hand it them decoded.
        const basic = basicCredentials(request.headers.authorization);
        headers.authorization = basic ? `Basic ${Buffer.from(`${basic.clientId}:${basic.secret}`).toString('base64')}` : request.headers.authorization;
      }
      const attempt = await bruteForce('token', request.ip, basicCredentials(request.headers.authorization)?.clientId ?? form.values.client_id);
      if (form.values.grant_type === 'implicit' || form.values.grant_type === 'password') {
        return sendProtocol(reply, protocolError(400, 'unsupported_grant_type', `The ${form.values.grant_type} grant is not served at the token endpoint.`));
      }
      const response = await server.token(headers, form.values);
      if (response.status === 200) await attempt.succeeded();
      return sendProtocol(reply, response);
    });

    app.post('/oauth/revoke', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
      const form = formOf(request);
      if (!form) return sendProtocol(reply, protocolError(400, 'invalid_request', 'Send the parameters as application/x-www-form-urlencoded.'));
      if (form.repeated.length > 0) return sendProtocol(reply, protocolError(400, 'invalid_request', `Each parameter may be sent once: ${form.repeated.join(', ')}.`));
      const basic = basicCredentials(request.headers.authorization);
      const clientId = basic?.clientId ?? form.values.client_id;
      const client = clientId ? await server.authenticateClient(clientId, basic?.secret ?? form.values.client_secret) : undefined;
      if (!client) {
        const refused = protocolError(401, 'invalid_client', 'Client authentication failed.');
        if (request.headers.authorization) refused.headers['www-authenticate'] = 'Basic realm="oauth"';
        return sendProtocol(reply, refused);
      }
      if (!form.values.token) return sendProtocol(reply, protocolError(400, 'invalid_request', 'The token parameter is required.'));
      return sendProtocol(reply, await server.revoke(client, form.values.token));
    });
  };
}
