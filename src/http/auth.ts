import type { FastifyRequest } from 'fastify';
import { AppError, ForbiddenError, UnauthorizedError } from '../kernel/errors.js';
import type { ChangeContext } from '../kernel/change-context.js';
import type { CredentialKind, CredentialResolver, PresentedCredential, Principal, Transport } from '../kernel/principal.js';
import { hasScope, type Scope } from '../kernel/scopes.js';
import type { RequestHook, RouteFilter } from '../kernel/request-stage.js';

/**
 * What an operation admits, after the interface's §5.1 schemes: `api_key` (an API key, in
 * X-API-Key or as a bearer token), `bearer_auth` (a login token), and `any_bearer`, which
 * the endpoint table calls `oauth` but which admits every bearer credential (an OAuth access
 * token, a login token, an API key as a bearer token: decisions §6).
 */
export type Scheme = 'api_key' | 'any_bearer' | 'bearer_auth';

export interface AuthRequirement {
  schemes: readonly Scheme[];
  /** Omitted: any valid credential of the caller's own will do (e.g. managing one's keys). */
  scope?: Scope;
  /** A rule of the operation's own about the credential (why it is refused, or null), judged before the scope: its 403 names that rule. */
  refuse?: (principal: Principal) => string | null;
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

/**
 * The credentials sent, the one that acts first: `Authorization` (the user's) before
 * `X-API-Key` (the calling application's). Clients generated from an OpenAPI document send
 * every credential they were given; the same key in both headers is that one key.
 */
function presentedCredentials(request: FastifyRequest): PresentedCredential[] {
  // Two lines of either header never get here: a 400 from the request guards (request-guards.ts).
  const header = request.headers['x-api-key'] as string | undefined;
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
 * sent; `any_bearer` takes any bearer credential; `bearer_auth` takes login tokens only.
 */
function admits(schemes: readonly Scheme[], kind: CredentialKind, transport: Transport): boolean {
  return schemes.some((scheme) => {
    switch (scheme) {
      case 'api_key':
        return kind === 'api_key';
      case 'any_bearer':
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
    if (s === 'any_bearer') parts.add('a bearer credential (OAuth access token, login token or API key) in Authorization');
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

export interface AuthOptions {
  resolver: PrincipalResolver;
  /** Told of every request refused here or taken by no route (the module stages `refused`). */
  refused: RequestHook | undefined;
}

/**
 * Every request's principal is resolved here and nowhere else; each route's `config.auth`
 * is enforced here, and the OpenAPI document reads the same declaration (openapi.ts). Two
 * pipeline stages (pipeline.ts): `authenticate` on every non-public route (a route without a
 * declaration fails at start-up), and `identifyUnrouted` for requests no route takes.
 */
export function authStages({ resolver, refused }: AuthOptions): { applies: RouteFilter; authenticate: RequestHook; identifyUnrouted: RequestHook } {
  const requirementOf = (request: FastifyRequest) => request.routeOptions.config.auth as AuthRequirement;

  // No route takes it (404, 405), and that is the answer whatever the credential; but the
  // caller is identified, never refused, so that probing costs its account or its address.
  const identifyUnrouted: RequestHook = (request, reply, next) => {
    if (!request.is404 || !refused) return next();
    const count = () => refused(request, reply, next);
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
  };

  const admit = (request: FastifyRequest, presented: PresentedCredential[], principals: Principal[]) => {
    const auth = requirementOf(request);
    const principal = principals[0]!;
    // Set before the checks: a valid credential of the wrong kind is refused, and counted against its account.
    request.principal = principal;
    if (!presented.some((credential, i) => admits(auth.schemes, principals[i]!.credential.kind, credential.transport))) {
      throw new UnauthorizedError(`This operation does not take that kind of credential; send ${describeSchemes(auth.schemes)}.`);
    }
    const refusal = auth.refuse?.(principal);
    if (refusal) throw new ForbiddenError(refusal);
    if (auth.scope && !hasScope(principal.scopes, auth.scope)) {
      throw new ForbiddenError(`This operation needs the ${auth.scope} scope, which your credential does not carry.`);
    }
  };
  const authorize = (request: FastifyRequest): void | Promise<void> => {
    const presented = presentedCredentials(request);
    if (presented.length === 0) throw new UnauthorizedError(`Authentication required: send ${describeSchemes(requirementOf(request).schemes)}.`);
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
  // and no anonymous 10 MB upload is ever parsed). Synchronous when every credential is cached.
  const authenticate: RequestHook = (request, reply, next) => {
    const refuse = (error: unknown) => {
      // A refusal counts (rate limits): against the account once the credential is known (a
      // 403 probes as much as a 200), its address before (guessing keys). Not our own
      // failures (5xx): a client is not charged for an outage.
      if (refused && error instanceof AppError && error.status < 500) refused(request, reply, (limited) => next(limited ?? error));
      else next(error as Error);
    };
    let outcome: void | Promise<void>;
    try {
      outcome = authorize(request);
    } catch (error) {
      refuse(error);
      return;
    }
    if (outcome instanceof Promise) outcome.then(() => next(), refuse);
    else next();
  };

  const applies: RouteFilter = (route) => {
    const auth = route.config?.auth;
    if (auth === undefined && route.url.startsWith('/v2')) throw new Error(`route ${route.method} ${route.url} must declare config.auth`);
    return auth !== undefined && auth !== 'public';
  };
  return { applies, authenticate, identifyUnrouted };
}

/** The principal of an authenticated route; only routes declared non-public may call this. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

/**
 * Who is asking, under which request id: what a service needs to make a change on the caller's
 * behalf. `pathOf`: a creating route's Location for the id its service reports (ChangeContext.created).
 */
export function changeContextOf(request: FastifyRequest, pathOf?: (id: string | number) => string): ChangeContext {
  const note = request.noteCreated;
  // Only where the key is honoured (the idempotency stage has refused a malformed one by now): events record it (issue 21).
  const key = request.routeOptions.config.idempotent ? request.headers['idempotency-key'] : undefined;
  return {
    requestId: request.id,
    principal: request.principal,
    idempotencyKey: typeof key === 'string' ? key : null,
    ...(note && pathOf && { created: (trx, id, owner) => note(trx, pathOf(id), owner) }),
  };
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
    if (scheme === 'any_bearer') schemes.add('cheesy_oauth').add('bearer_auth').add('api_key_bearer');
    if (scheme === 'bearer_auth') schemes.add('bearer_auth');
  }
  return [...schemes].map((name) => ({ [name]: name === 'cheesy_oauth' && auth.scope ? [auth.scope] : [] }));
}
