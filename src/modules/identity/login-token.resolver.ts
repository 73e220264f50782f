import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { UnauthorizedError } from '../../kernel/errors.js';
import { ExpiringCache } from '../../kernel/expiring-cache.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { newPrincipal, type CredentialResolver, type PresentedCredential, type Principal } from '../../kernel/principal.js';
import { ROLE_SCOPES } from '../../kernel/scopes.js';
import type { LoginSessionRepository } from './login-session.repository.js';
import type { Revocation, RevocationHandler } from './credential-revocations.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import type { Keys } from '../../kernel/key-ring.js';

const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const AUDIENCE = 'fromagerie-api';
const KEY_ID = 'login-v1';
const MAX_CACHED_TOKENS = 10_000;

export interface LoginTokenOptions {
  sessions: LoginSessionRepository;
  /** The key ring's 'login-tokens' keys: tokens are signed with the current one, verified under any (an APP_SECRET rotation). */
  keys: Keys;
  /** The `iss` of every token: this deployment's public URL. */
  issuer: string;
  environment: CheeseEnv;
  /** How long a verified token is trusted without looking at its session (0 = never). */
  cacheTtlMs: number;
  clock?: Clock;
}

/**
 * Login tokens: HS256 JWTs (jose) naming a session row. The signature and expiry are checked
 * on every request; the session (revoked by logout, a new password or account deletion) at
 * most every `cacheTtlMs`, and at once on every instance told of a revocation (`drop`).
 */
export class LoginTokenResolver implements CredentialResolver, RevocationHandler {
  readonly kind = 'login_token' as const;
  readonly #verified: ExpiringCache<string, Principal>;

  constructor(private readonly options: LoginTokenOptions) {
    this.#verified = new ExpiringCache({ ttlMs: options.cacheTtlMs, max: MAX_CACHED_TOKENS, clock: options.clock });
  }

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  claims(credential: PresentedCredential): boolean {
    return JWT_SHAPE.test(credential.token);
  }

  async sign(session: { sessionId: number; accountId: number; expiresAt: Date }): Promise<string> {
    return new SignJWT({ sid: String(session.sessionId), env: this.options.environment })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: KEY_ID })
      .setSubject(String(session.accountId))
      .setIssuer(this.options.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt(Math.floor(this.#clock.now() / 1000))
      .setExpirationTime(Math.floor(session.expiresAt.getTime() / 1000))
      .sign(this.options.keys.current);
  }

  async resolve(credential: PresentedCredential): Promise<Principal> {
    const now = this.#clock.now();
    const cached = this.#verified.get(credential.token);
    if (cached && (cached.credential.expiresAt ?? Infinity) > now) return cached;
    let claims: { sid?: unknown; env?: unknown; exp?: number };
    try {
      claims = await this.#verify(credential.token, now);
    } catch (error) {
      throw new UnauthorizedError(error instanceof joseErrors.JWTExpired ? 'The login token has expired; log in again.' : 'The login token is invalid.');
    }
    if (claims.env !== this.options.environment || typeof claims.sid !== 'string' || !/^[0-9]{1,15}$/.test(claims.sid)) {
      throw new UnauthorizedError('The login token is invalid.');
    }
    const session = await this.options.sessions.findActive(Number(claims.sid), new Date(now).toISOString());
    if (!session) throw new UnauthorizedError('The login token has been revoked; log in again.');
    const principal = newPrincipal(session, ROLE_SCOPES[session.role], this.options.environment, { kind: 'login_token', id: session.sessionId, expiresAt: claims.exp! * 1000 });
    this.#verified.set(credential.token, principal);
    return principal;
  }

  /** The claims of a token signed under the current key or, during an APP_SECRET rotation, the previous one. */
  async #verify(token: string, now: number): Promise<{ sid?: unknown; env?: unknown; exp?: number }> {
    const keys = this.options.keys.all;
    for (const [index, key] of keys.entries()) {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: this.options.issuer, audience: AUDIENCE, requiredClaims: ['sid', 'sub', 'exp'], currentDate: new Date(now) });
        return payload;
      } catch (error) {
        // Only a signature made under another key sends it to the next; an expired or foreign token is refused as it is.
        if (!(error instanceof joseErrors.JWSSignatureVerificationFailed) || index === keys.length - 1) throw error;
      }
    }
    throw new joseErrors.JWSSignatureVerificationFailed();
  }

  /** A revoked session's tokens, or an account's (but the session that acted), stop being trusted here. */
  drop(revocation: Revocation): void {
    if (revocation.kind === 'login_session') this.#verified.forgetWhere((p) => p.credential.id === revocation.id);
    else if (revocation.kind === 'account') this.#verified.forgetWhere((p) => p.accountId === revocation.accountId && p.credential.id !== revocation.exceptLoginSession);
  }

  flush(): void {
    this.#verified.forgetWhere(() => true);
  }
}
