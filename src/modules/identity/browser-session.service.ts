import { createHash, randomBytes } from 'node:crypto';
import type { BrowserSession } from '../../kernel/browser-session.js';
import type { BruteForceGuard } from '../../kernel/brute-force.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { newPrincipal } from '../../kernel/principal.js';
import { ROLE_SCOPES, type Role } from '../../kernel/scopes.js';
import type { BrowserSessionRepository } from './browser-session.repository.js';

export type { BrowserSession } from '../../kernel/browser-session.js';
import type { LoginService } from './login.service.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export interface BrowserSessionSettings {
  /** A session unused for this long ends. */
  idleMs: number;
  /** A session ends this long after its sign-in, used or not. */
  maxMs: number;
  /** Sensitive actions ask for the password again when it was last given longer ago than this. */
  stepUpAfterMs: number;
}

export type SignInOutcome = { signedIn: true; token: string; session: BrowserSession } | { signedIn: false };

/** Writes to `last_seen_at` at most this often: a page view is not a database write. */
const TOUCH_EVERY_MS = 60_000;

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Browser sign-ins (decisions.md "Issue 19"): 32 random bytes the browser keeps in an HttpOnly
 * cookie, stored as their SHA-256; ended by sign-out, idleness, the absolute lifetime, a new
 * password and the account's deletion. Looked up on every page, never cached: an ended
 * session is refused at once by every instance.
 */
export class BrowserSessionService {
  constructor(
    private readonly options: {
      sessions: BrowserSessionRepository;
      logins: LoginService;
      bruteForce: BruteForceGuard;
      environment: CheeseEnv;
      settings: BrowserSessionSettings;
      clock?: Clock;
    },
  ) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  get settings(): BrowserSessionSettings {
    return this.options.settings;
  }

  /** Checks the password under the login guard (429 when over it) and opens a session. */
  async signIn(username: string, password: string, ip: string, now = this.#clock.date()): Promise<SignInOutcome> {
    const attempt = await this.options.bruteForce('login', ip, username);
    const account = username && password ? await this.options.logins.verify(username, password) : undefined;
    if (!account) return { signedIn: false };
    await attempt.succeeded();
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + this.options.settings.maxMs).toISOString();
    const id = await this.options.sessions.create(account.id, hashOf(token), now.toISOString(), expiresAt);
    return { signedIn: true, token, session: this.#view({ id, accountId: account.id, username: account.username, role: account.role, authenticatedAt: now.toISOString(), expiresAt }) };
  }

  /** The session this cookie value opens, if it is neither idle too long nor past its end. */
  async resolve(token: string | undefined, now = this.#clock.date()): Promise<BrowserSession | undefined> {
    if (!token || token.length > 100) return undefined;
    const row = await this.options.sessions.findByHash(hashOf(token), now.toISOString());
    if (!row) return undefined;
    const idleFor = now.getTime() - Date.parse(row.lastSeenAt);
    if (idleFor >= this.options.settings.idleMs) {
      await this.options.sessions.delete(row.id);
      return undefined;
    }
    if (idleFor >= TOUCH_EVERY_MS) await this.options.sessions.touch(row.id, now.toISOString());
    return this.#view(row);
  }

  /** Whether a sensitive action needs the password again first. */
  needsStepUp(session: BrowserSession, now = this.#clock.date()): boolean {
    return now.getTime() - Date.parse(session.authenticatedAt) > this.options.settings.stepUpAfterMs;
  }

  /** The password given again (under the login guard): true when it is right, and the session is fresh again. */
  async stepUp(session: BrowserSession, password: string, ip: string, now = this.#clock.date()): Promise<boolean> {
    const attempt = await this.options.bruteForce('login', ip, session.username);
    const account = password ? await this.options.logins.verify(session.username, password) : undefined;
    if (!account || account.id !== session.accountId) return false;
    await attempt.succeeded();
    await this.options.sessions.markAuthenticated(session.id, now.toISOString());
    return true;
  }

  async signOut(session: BrowserSession): Promise<void> {
    await this.options.sessions.delete(session.id);
  }

  /** Ends sessions past their end or idle too long (an hourly job). */
  prune(now = this.#clock.date()): Promise<number> {
    return this.options.sessions.pruneEnded(now.toISOString(), new Date(now.getTime() - this.options.settings.idleMs).toISOString());
  }

  #view(row: { id: number; accountId: number; username: string; role: Role; authenticatedAt: string; expiresAt: string }): BrowserSession {
    // The owner proved the password (again within 10 minutes for what matters): what it makes
    // through the dashboard, a key that never expires say, need not end with this sign-in.
    const principal = newPrincipal(row, ROLE_SCOPES[row.role], this.options.environment, { kind: 'browser_session', id: row.id, expiresAt: null });
    return { id: row.id, accountId: row.accountId, username: row.username, role: row.role, authenticatedAt: row.authenticatedAt, expiresAt: row.expiresAt, principal };
  }
}
