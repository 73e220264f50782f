import type { CheeseEnv } from './environment.js';
import type { Role, Scope } from './scopes.js';

/** `browser_session`: a dashboard sign-in (a cookie); never accepted by /v2, it acts only through the dashboard's pages. */
export type CredentialKind = 'api_key' | 'login_token' | 'oauth_token' | 'browser_session';

/** Who is calling, whatever credential they used. Routes and services only ever see this. */
export interface Principal {
  accountId: number;
  username: string;
  role: Role;
  scopes: ReadonlySet<Scope>;
  environment: CheeseEnv;
  /** The credential presented; `expiresAt` (epoch ms, null = never) bounds what it may create. */
  credential: {
    kind: CredentialKind;
    id: number;
    expiresAt: number | null;
    /** An OAuth access token's grant and its client's public id: what the token makes lives only as long as the grant (issue 28). */
    grant?: { id: number; clientId: string };
    /** An API key rolled and living out its grace period: it manages nothing but itself (issue 28). */
    retiring?: boolean;
  };
}

/** How the credential arrived: the X-API-Key header or `Authorization: Bearer`. */
export type Transport = 'api_key_header' | 'bearer';

export interface PresentedCredential {
  token: string;
  transport: Transport;
}

/**
 * One per credential format: identity's resolvers claim API keys (`sk_…`) and login tokens
 * (JWTs), oauth's claims its access tokens (`oat_…`); a new format is a new resolver, and no
 * route changes. `resolve` throws
 * UnauthorizedError for a claimed but invalid, expired or revoked credential.
 */
export interface CredentialResolver {
  readonly kind: CredentialKind;
  claims(credential: PresentedCredential): boolean;
  /** Synchronous when the answer is cached (every request asks: a promise here is measurable). */
  resolve(credential: PresentedCredential): Principal | Promise<Principal>;
}

/**
 * The one way a Principal is made: every resolver (API key, login token, OAuth token, browser
 * session) names the account, the scopes its credential carries and the credential, and gets
 * the same shape, with its scopes as a set.
 */
export function newPrincipal(account: { accountId: number; username: string; role: Role }, scopes: Iterable<Scope>, environment: CheeseEnv, credential: Principal['credential']): Principal {
  return { accountId: account.accountId, username: account.username, role: account.role, scopes: new Set(scopes), environment, credential };
}
