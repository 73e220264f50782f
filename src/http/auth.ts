import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ForbiddenError, InvalidRequestError, UnauthorizedError } from './errors.js';
import type { CredentialResolver, PresentedCredential, Principal } from '../modules/identity/principal.js';
import { hasScope, type Scope } from '../modules/identity/scopes.js';

/** Interface §5.1 scheme names, as each route of the endpoint table lists them. */
export type Scheme = 'api_key' | 'oauth' | 'bearer_auth';

export interface AuthRequirement {
  schemes: readonly Scheme[];
  /** Omitted: any valid credential of the caller's own will do (e.g. managing one's keys). */
  scope?: Scope;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'public', or what a caller must present. Every route states one. */
    auth?: AuthRequirement | 'public';
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function presentedCredential(request: FastifyRequest): PresentedCredential | null {
  const header = request.headers['x-api-key'];
  const authorization = request.headers.authorization;
  if (header !== undefined && authorization !== undefined) {
    throw new InvalidRequestError('Send one credential: either X-API-Key or Authorization, not both.');
  }
  if (typeof header === 'string') return { token: header.trim(), transport: 'api_key_header' };
  if (header !== undefined) throw new InvalidRequestError('Send X-API-Key once.');
  if (authorization === undefined) return null;
  const match = BEARER.exec(authorization);
  if (!match?.[1]) throw new UnauthorizedError('The Authorization header must read "Bearer <token>".');
  return { token: match[1], transport: 'bearer' };
}

/** Which credentials a route's schemes admit (decisions.md §6). */
function admits(schemes: readonly Scheme[], credential: PresentedCredential): boolean {
  const apiKey = credential.token.startsWith('sk_');
  return schemes.some((scheme) => {
    switch (scheme) {
      case 'api_key':
        return apiKey;
      case 'oauth':
        return credential.transport === 'bearer';
      case 'bearer_auth':
        return credential.transport === 'bearer' && !apiKey;
    }
  });
}

function describeSchemes(schemes: readonly Scheme[]): string {
  const parts = new Set<string>();
  for (const s of schemes) {
    if (s === 'api_key') parts.add('an API key in X-API-Key or as "Authorization: Bearer sk_…"');
    if (s === 'oauth') parts.add('a bearer credential (OAuth token, login token or API key) in Authorization');
    if (s === 'bearer_auth') parts.add('a login token in "Authorization: Bearer"');
  }
  return [...parts].join(', or ');
}

export class PrincipalResolver {
  constructor(private readonly resolvers: readonly CredentialResolver[]) {}

  async resolve(credential: PresentedCredential): Promise<Principal> {
    const resolver = this.resolvers.find((r) => r.claims(credential));
    if (!resolver) throw new UnauthorizedError('The credential is not recognised.');
    return resolver.resolve(credential);
  }
}

/**
 * Every request's principal is resolved here and nowhere else; each route's `config.auth`
 * is enforced here, and the OpenAPI document reads the same declaration (openapi.ts).
 */
export const authPlugin = fp<{ resolver: PrincipalResolver }>(async (app: FastifyInstance, { resolver }) => {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (auth === undefined && route.url.startsWith('/v2')) throw new Error(`route ${route.method} ${route.url} must declare config.auth`);
    if (auth === undefined || auth === 'public') return;
    const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        await authorize(request);
      } catch (error) {
        // Refused before its body was read: close the connection rather than leave that body
        // unread on a keep-alive socket (RFC 9112 §9.6).
        if (hasBody(request)) reply.header('connection', 'close');
        throw error;
      }
    };
    const authorize = async (request: FastifyRequest) => {
      const credential = presentedCredential(request);
      if (!credential) throw new UnauthorizedError(`Authentication required: send ${describeSchemes(auth.schemes)}.`);
      if (!admits(auth.schemes, credential)) {
        throw new UnauthorizedError(`This operation does not take that kind of credential; send ${describeSchemes(auth.schemes)}.`);
      }
      const principal = await resolver.resolve(credential);
      request.principal = principal;
      if (auth.scope && !hasScope(principal.scopes, auth.scope)) {
        throw new ForbiddenError(`This operation needs the ${auth.scope} scope, which your credential does not carry.`);
      }
    };
    // onRequest: a caller is turned away before its body is read or validated (401 before 422,
    // and no anonymous 10 MB upload is ever parsed).
    const existing = route.onRequest;
    route.onRequest = (existing === undefined ? [authenticate] : [authenticate, ...(Array.isArray(existing) ? existing : [existing])]) as typeof route.onRequest;
  });
});

/** The principal of an authenticated route; only routes declared non-public may call this. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

/** OpenAPI security requirement objects for a declaration (OAS 3.1 allows roles on any scheme). */
export function securityFor(auth: AuthRequirement | 'public' | undefined): Record<string, string[]>[] {
  if (auth === undefined || auth === 'public') return [];
  const requirements = new Map<string, string[]>();
  const scopes = auth.scope ? [auth.scope] : [];
  for (const scheme of auth.schemes) {
    if (scheme === 'api_key') {
      requirements.set('api_key', scopes);
      requirements.set('api_key_bearer', scopes);
    }
    if (scheme === 'oauth') {
      requirements.set('cheesy_oauth', scopes);
      requirements.set('bearer_auth', scopes);
      requirements.set('api_key_bearer', scopes);
    }
    if (scheme === 'bearer_auth') requirements.set('bearer_auth', scopes);
  }
  return [...requirements].map(([name, scopes]) => ({ [name]: scopes }));
}
