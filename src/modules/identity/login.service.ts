import { UnauthorizedError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { Role } from '../../kernel/scopes.js';
import type { AccountRepository } from './account.repository.js';
import type { LoginSessionRepository } from './login-session.repository.js';
import type { LoginTokenResolver } from './login-token.resolver.js';
import type { CredentialRevocations } from './credential-revocations.js';
import { hashPassword, verifyPassword } from './password.hash.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export interface LoginToken {
  token: string;
  expiresAt: string;
}

const INVALID_LOGIN = 'Invalid username or password.';

/** POST /customer/login and GET /customer/logout: login tokens for customers and staff alike. */
export class LoginService {
  /** Verified against when the username is unknown, so both failures take the same time. */
  readonly #decoyHash: Promise<string>;

  constructor(
    private readonly options: { accounts: AccountRepository; sessions: LoginSessionRepository; tokens: LoginTokenResolver; revocations: CredentialRevocations; tokenTtlSeconds: number; passwordCost?: number; clock?: Clock },
  ) {
    // At the accounts' own cost, so an unknown username takes as long as a wrong password.
    this.#decoyHash = hashPassword("decoy password, never anyone's", options.passwordCost);
  }

  /** The account these credentials open, or undefined; an unknown username takes as long as a wrong password. */
  async verify(username: string, password: string): Promise<{ id: number; username: string; role: Role } | undefined> {
    const account = await this.options.accounts.findLoginByUsername(username);
    const matches = await verifyPassword(password, account?.passwordHash ?? (await this.#decoyHash));
    return account && matches ? { id: account.id, username: account.username, role: account.role } : undefined;
  }

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  async login(username: string, password: string): Promise<LoginToken> {
    const account = await this.verify(username, password);
    if (!account) throw new UnauthorizedError(INVALID_LOGIN);
    const now = this.#clock.date();
    const expiresAt = new Date(now.getTime() + this.options.tokenTtlSeconds * 1000);
    const sessionId = await this.options.sessions.create(account.id, expiresAt.toISOString(), now.toISOString());
    const token = await this.options.tokens.sign({ sessionId, accountId: account.id, expiresAt });
    return { token, expiresAt: expiresAt.toISOString() };
  }

  /** Revokes the login token the principal presented; every instance stops trusting it at once (CredentialRevocations). */
  async logout(principal: Principal): Promise<void> {
    if (principal.credential.kind !== 'login_token') throw new UnauthorizedError('Log out with the login token itself.');
    const sessionId = principal.credential.id;
    await this.options.sessions.revoke(sessionId, this.#clock.iso());
    await this.options.revocations.revoked({ kind: 'login_session', id: sessionId });
  }
}
