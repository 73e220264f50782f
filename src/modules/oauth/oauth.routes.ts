import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { OAUTH_SCOPES } from '../../kernel/scopes.js';
import { protocolError, type AuthorizationServer, type ProtocolResponse } from './oauth.service.js';

/** A form body: each parameter once (RFC 6749 §3.1), or the names given more than once. */
interface FormBody {
  values: Record<string, string>;
  repeated: string[];
}

function parseForm(text: string): FormBody {
  // A Map: the names are the client's, and `values.__proto__ = …` would set no parameter at all.
  const values = new Map<string, string>();
  const repeated: string[] = [];
  for (const [name, value] of new URLSearchParams(text)) {
    if (values.has(name)) repeated.push(name);
    else values.set(name, value);
  }
  return { values: Object.fromEntries(values), repeated };
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
 * The authorization server's protocol endpoints at the service root (decisions.md §6): the
 * metadata, the token and revocation endpoints. The authorization endpoint's pages are
 * oauth-pages.routes.ts.
 */
export function oauthRoutes(options: { server: AuthorizationServer }): FastifyPluginAsync {
  const { server } = options;
  return async (app) => {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, parseForm(String(body))));

    app.get('/.well-known/oauth-authorization-server', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=3600');
      return server.metadata(OAUTH_SCOPES);
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
