import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ForbiddenError, InvalidRequestError, UnauthorizedError } from '../kernel/errors.js';
import type { ChangeContext } from '../kernel/change-context.js';
import type { CredentialKind, CredentialResolver, PresentedCredential, Principal, Transport } from '../kernel/principal.js';
import { hasScope, type Scope } from '../kernel/scopes.js';

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
    /** Set when the request carries an Idempotency-Key: see ChangeContext.created. */
    noteCreated?: (trx: unknown, resourcePath: string, ownerAccountId?: number) => Promise<void>;
  }
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The credentials sent, the one that acts first: `Authorization` (the user's) before
 * `X-API-Key` (the calling application's). Clients generated from an OpenAPI document send
 * every credential they were given; the same key in both headers is that one key.
 */
function presentedCredentials(request: FastifyRequest): PresentedCredential[] {
  const header = request.headers['x-api-key'];
  if (header !== undefined && typeof header !== 'string') throw new InvalidRequestError('Send X-API-Key once.');
  const presented: PresentedCredential[] = [];
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization);
    if (!match?.[1]) throw new UnauthorizedError('The Authorization header must read "Bearer <token>".');
    presented.push({ token: match[1], transport: 'bearer' });
  }
  if (header !== undefined && header.trim() !== presented[0]?.token) presented.push({ token: header.trim(), transport: 'api_key_header' });
  return presented;
}

/**
 * Whether a route's schemes admit a resolved credential (decisions.md §6), judged by what the
 * credential turned out to be, never by how its text looks: `api_key` takes API keys however
 * sent; `oauth` takes any bearer credential; `bearer_auth` takes login tokens only.
 */
function admits(schemes: readonly Scheme[], kind: CredentialKind, transport: Transport): boolean {
  return schemes.some((scheme) => {
    switch (scheme) {
      case 'api_key':
        return kind === 'api_key';
      case 'oauth':
        return transport === 'bearer';
      case 'bearer_auth':
        return transport === 'bearer' && kind === 'login_token';
    }
  });
}

function describeSchemes(schemes: readonly Scheme[]): string {
  const parts = new Set<string>();
  for (const s of schemes) {
    if (s === 'api_key') parts.add('an API key in X-API-Key or as "Authorization: Bearer sk_…"');
    if (s === 'oauth') parts.add('a bearer credential (OAuth access token, login token or API key) in Authorization');
    if (s === 'bearer_auth') parts.add('a login token in "Authorization: Bearer"');
  }
  return [...parts].join(', or ');
}

export class PrincipalResolver {
  constructor(private readonly resolvers: readonly CredentialResolver[]) {}

  /** Synchronous when the credential's resolver has it cached; throws or rejects with a 401. */
  resolve(credential: PresentedCredential): Principal | Promise<Principal> {
    const resolver = this.resolvers.find((r) => r.claims(credential));
    if (!resolver) throw new UnauthorizedError('The credential is not recognised.');
    return resolver.resolve(credential);
  }
}

/**
 * Every request's principal is resolved here and nowhere else; each route's `config.auth`
 * is enforced here, and the OpenAPI document reads the same declaration (openapi.ts).
 * `onRejected` (the rate limits) counts what is turned away here, and what no route takes:
 * it calls `done` with an error of its own (429) or none.
 */
export const authPlugin = fp<{ resolver: PrincipalResolver; onRejected?: ((request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void) | undefined }>(async (app: FastifyInstance, { resolver, onRejected }) => {
  app.decorateRequest('principal', null);

  if (onRejected) {
    // No route takes it (404, 405), and that is the answer whatever the credential; but the
    // caller is identified, never refused, so that probing costs its account or its address.
    app.addHook('onRequest', (request, reply, done) => {
      if (!request.is404) return done();
      const count = () => onRejected(request, reply, done);
      let identified: Principal | Promise<Principal>;
      try {
        const first = presentedCredentials(request)[0];
        if (!first) return count();
        identified = resolver.resolve(first);
      } catch {
        return count();
      }
      if (!(identified instanceof Promise)) {
        request.principal = identified;
        return count();
      }
      identified.then((principal) => {
        request.principal = principal;
      }, () => undefined).then(count);
    });
  }

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (auth === undefined && route.url.startsWith('/v2')) throw new Error(`route ${route.method} ${route.url} must declare config.auth`);
    if (auth === undefined || auth === 'public') return;
    // Callback style, and synchronous when every credential is cached: it runs on every request.
    const authenticate = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      const refuse = (error: unknown) => {
        // Refused before its body was read: close the connection rather than leave that body
        // unread on a keep-alive socket (RFC 9112 §9.6).
        if (hasBody(request)) reply.header('connection', 'close');
        // A refusal counts (rate limits): against the account once the credential is known (a
        // 403 probes as much as a 200), its address before (guessing keys). Not our own
        // failures (5xx): a client is not charged for an outage.
        if (onRejected && error instanceof AppError && error.status < 500) onRejected(request, reply, (limited) => done(limited ?? error));
        else done(error as Error);
      };
      let outcome: void | Promise<void>;
      try {
        outcome = authorize(request);
      } catch (error) {
        refuse(error);
        return;
      }
      if (outcome instanceof Promise) outcome.then(() => done(), refuse);
      else done();
    };
    const admit = (request: FastifyRequest, presented: PresentedCredential[], principals: Principal[]) => {
      const principal = principals[0]!;
      // Set before the checks: a valid credential of the wrong kind is refused, and counted against its account.
      request.principal = principal;
      if (!presented.some((credential, i) => admits(auth.schemes, principals[i]!.credential.kind, credential.transport))) {
        throw new UnauthorizedError(`This operation does not take that kind of credential; send ${describeSchemes(auth.schemes)}.`);
      }
      if (auth.scope && !hasScope(principal.scopes, auth.scope)) {
        throw new ForbiddenError(`This operation needs the ${auth.scope} scope, which your credential does not carry.`);
      }
    };
    const authorize = (request: FastifyRequest): void | Promise<void> => {
      const presented = presentedCredentials(request);
      if (presented.length === 0) throw new UnauthorizedError(`Authentication required: send ${describeSchemes(auth.schemes)}.`);
      // Every credential sent must be valid, so a client learns that one of them was revoked.
      const resolved = presented.map((credential) => {
        try {
          return resolver.resolve(credential);
        } catch (error) {
          return Promise.reject(error);
        }
      });
      if (resolved.some((r) => r instanceof Promise)) return Promise.all(resolved).then((principals) => admit(request, presented, principals));
      admit(request, presented, resolved as Principal[]);
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

/** Who is asking, under which request id: what a service needs to make a change on the caller's behalf. */
export function changeContextOf(request: FastifyRequest): ChangeContext {
  return { requestId: request.id, principal: request.principal, ...(request.noteCreated && { created: request.noteCreated }) };
}

/**
 * OpenAPI security requirement objects for a declaration. Scopes are listed on the OAuth
 * scheme only (Spectral's oas ruleset warns otherwise); the operation's description says
 * which scope it needs for the others (openapi.ts).
 */
export function securityFor(auth: AuthRequirement | 'public' | undefined): Record<string, string[]>[] {
  if (auth === undefined || auth === 'public') return [];
  const schemes = new Set<string>();
  for (const scheme of auth.schemes) {
    if (scheme === 'api_key') schemes.add('api_key').add('api_key_bearer');
    // Any bearer credential: an OAuth token, a login token, or an API key as a bearer token.
    if (scheme === 'oauth') schemes.add('cheesy_oauth').add('bearer_auth').add('api_key_bearer');
    if (scheme === 'bearer_auth') schemes.add('bearer_auth');
  }
  return [...schemes].map((name) => ({ [name]: name === 'cheesy_oauth' && auth.scope ? [auth.scope] : [] }));
}
