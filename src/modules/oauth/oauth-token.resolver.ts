import { UnauthorizedError } from '../../kernel/errors.js';
import { ExpiringCache } from '../../kernel/expiring-cache.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { newPrincipal, type CredentialResolver, type PresentedCredential, type Principal } from '../../kernel/principal.js';
import { ROLE_SCOPES, parseScopes } from '../../kernel/scopes.js';
import type { Revocation, RevocationHandler } from '../identity/identity.module.js';
import type { OAuthTokenRepository } from './oauth-token.repository.js';
import { hashToken, TOKEN_PREFIX } from './oauth.model.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

const ACCESS_TOKEN = /^oat_[A-Za-z0-9_-]{43}$/;
const MAX_CACHED_TOKENS = 10_000;

interface Cached {
  principal: Principal;
  grantId: number;
}

/**
 * Turns an OAuth access token (`oat_…`) into the principal it stands for, or a 401. Resolved
 * tokens are trusted for `cacheTtlMs` (as API keys are): a revocation (`forget`) applies at
 * once on every instance through the identity module's CredentialRevocations.
 */
export class OAuthTokenResolver implements CredentialResolver, RevocationHandler {
  readonly kind = 'oauth_token' as const;
  readonly #resolved: ExpiringCache<string, Cached>;

  constructor(private readonly options: { tokens: OAuthTokenRepository; environment: CheeseEnv; cacheTtlMs: number; revoked: (revocation: Revocation) => Promise<void>; clock?: Clock }) {
    this.#resolved = new ExpiringCache({ ttlMs: options.cacheTtlMs, max: MAX_CACHED_TOKENS, clock: options.clock });
  }

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  claims(credential: PresentedCredential): boolean {
    return credential.token.startsWith(TOKEN_PREFIX.access);
  }

  async resolve(credential: PresentedCredential): Promise<Principal> {
    if (!ACCESS_TOKEN.test(credential.token)) throw new UnauthorizedError('The OAuth access token is malformed.');
    const hash = hashToken(credential.token);
    const now = this.#clock.now();
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
    const principal = newPrincipal(stored, parseScopes(stored.scopes).filter((scope) => roleScopes.includes(scope)), this.options.environment, {
      kind: 'oauth_token',
      id: stored.id,
      expiresAt,
      grant: { id: stored.grantId, clientId: stored.clientId },
    });
    this.#resolved.set(hash, { principal, grantId: stored.grantId });
    return principal;
  }

  /** Once a grant or a token is revoked: every instance stops trusting its cached tokens. */
  forget(matches: { grantId?: number; tokenId?: number }): void {
    void this.options.revoked({ kind: 'oauth', ...matches });
  }

  drop(revocation: Revocation): void {
    if (revocation.kind === 'oauth') {
      const { grantId, tokenId } = revocation;
      this.#resolved.forgetWhere((entry) => (grantId !== undefined && entry.grantId === grantId) || (tokenId !== undefined && entry.principal.credential.id === tokenId));
    } else if (revocation.kind === 'account') {
      this.#resolved.forgetWhere((entry) => entry.principal.accountId === revocation.accountId);
    }
  }

  flush(): void {
    this.#resolved.forgetWhere(() => true);
  }
}
