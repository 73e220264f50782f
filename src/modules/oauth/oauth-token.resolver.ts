import { UnauthorizedError } from '../../kernel/errors.js';
import { ExpiringCache } from '../../kernel/expiring-cache.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { CredentialResolver, PresentedCredential, Principal } from '../../kernel/principal.js';
import { ROLE_SCOPES, parseScopes } from '../../kernel/scopes.js';
import type { OAuthTokenRepository } from './oauth-token.repository.js';
import { hashToken, TOKEN_PREFIX } from './oauth.model.js';

const ACCESS_TOKEN = /^oat_[A-Za-z0-9_-]{43}$/;
const MAX_CACHED_TOKENS = 10_000;

interface Cached {
  principal: Principal;
  grantId: number;
}

/**
 * Turns an OAuth access token (`oat_…`) into the principal it stands for, or a 401. Resolved
 * tokens are trusted for `cacheTtlMs` (as API keys are): a revocation applies at once on this
 * instance and within that bound on the others.
 */
export class OAuthTokenResolver implements CredentialResolver {
  readonly kind = 'oauth_token' as const;
  readonly #resolved: ExpiringCache<string, Cached>;

  constructor(private readonly options: { tokens: OAuthTokenRepository; environment: CheeseEnv; cacheTtlMs: number }) {
    this.#resolved = new ExpiringCache({ ttlMs: options.cacheTtlMs, max: MAX_CACHED_TOKENS });
  }

  claims(credential: PresentedCredential): boolean {
    return credential.token.startsWith(TOKEN_PREFIX.access);
  }

  async resolve(credential: PresentedCredential): Promise<Principal> {
    if (!ACCESS_TOKEN.test(credential.token)) throw new UnauthorizedError('The OAuth access token is malformed.');
    const hash = hashToken(credential.token);
    const now = Date.now();
    const cached = this.#resolved.get(hash);
    if (cached) {
      if (cached.principal.credential.expiresAt! <= now) throw new UnauthorizedError('The OAuth access token has expired.');
      return cached.principal;
    }
    const stored = await this.options.tokens.findByHash(hash, 'access_token');
    if (!stored || stored.revoked) throw new UnauthorizedError('The OAuth access token is invalid or has been revoked.');
    const expiresAt = stored.expiresAt.getTime();
    if (expiresAt <= now) throw new UnauthorizedError('The OAuth access token has expired.');
    // Never more than the account's role allows today, whatever was granted then.
    const roleScopes: readonly string[] = ROLE_SCOPES[stored.role];
    const principal: Principal = {
      accountId: stored.accountId,
      username: stored.username,
      role: stored.role,
      scopes: new Set(parseScopes(stored.scopes).filter((scope) => roleScopes.includes(scope))),
      environment: this.options.environment,
      credential: { kind: 'oauth_token', id: stored.id, expiresAt },
    };
    this.#resolved.set(hash, { principal, grantId: stored.grantId });
    return principal;
  }

  /** Stops trusting cached tokens at once on this instance: of a grant, or of an account. */
  forget(matches: { grantId?: number; accountId?: number; tokenId?: number }): void {
    this.#resolved.forgetWhere((entry) => entry.grantId === matches.grantId || entry.principal.accountId === matches.accountId || entry.principal.credential.id === matches.tokenId);
  }
}
