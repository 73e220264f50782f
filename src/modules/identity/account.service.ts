import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import type { Plan } from '../../kernel/plans.js';
import type { Principal } from '../../kernel/principal.js';
import { emailKey, type AccountRecord, type AccountRepository } from './account.repository.js';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { credentialChangeVerdict } from './credential-change.rules.js';
import type { BrowserSessionRepository } from './browser-session.repository.js';
import type { LoginSessionRepository } from './login-session.repository.js';
import type { CredentialRevocations } from './credential-revocations.js';
import { generatePassword, hashPassword, verifyPassword } from './password.hash.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export type { AccountRecord } from './account.repository.js';

export interface CredentialChanges {
  email: string;
  password: string;
  /** The proof a new password needs. */
  currentPassword?: string | undefined;
}

export interface CredentialChangeOutcome {
  passwordChanged: boolean;
  emailChanged: boolean;
  /** Login sessions ended (all of the account's but the acting one). */
  loginSessionsEnded: number;
  /** OAuth grants (third-party access) revoked, with every token of theirs. */
  oauthGrantsRevoked: number;
}

/** Another module's credentials of an account, revoked in the transaction of a password change. */
export type PasswordChangeListener = (trx: Transaction<DB>, accountId: number, now: string) => Promise<number>;

export interface AdminBootstrapResult {
  account: AccountRecord;
  /** Set only when the admin was created now with a generated password, to print once. */
  generatedPassword: string | undefined;
}

/**
 * Accounts as other modules may use them: each write joins the caller's transaction, so a
 * customer's profile and its account commit together.
 */
export class AccountService {
  readonly #passwordChangeListeners: PasswordChangeListener[] = [];

  constructor(
    private readonly options: {
      db: Kysely<DB>;
      accounts: AccountRepository;
      sessions: LoginSessionRepository;
      browserSessions: BrowserSessionRepository;
      keys: ApiKeyRepository;
      revocations: CredentialRevocations;
      /** scrypt's N for new hashes (PASSWORD_COST unless a test app lowers it). */
      passwordCost?: number;
      clock?: Clock;
    },
  ) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  /**
   * Creates the first admin from the environment if it does not exist yet. Idempotent.
   * `checkPassword` throws for a given password the policy refuses; it runs only when the
   * password is used (the admin is created now), never against an existing admin.
   */
  async ensureAdmin(username: string, password: string | undefined, checkPassword?: (password: string) => void): Promise<AdminBootstrapResult> {
    const { db, accounts } = this.options;
    const existing = await accounts.findByUsername(db, username);
    if (existing) return { account: existing, generatedPassword: undefined };
    if (password !== undefined) checkPassword?.(password);
    const generatedPassword = password ? undefined : generatePassword();
    const created = await accounts.create(db, { username, passwordHash: await hashPassword(password ?? (generatedPassword as string), this.options.passwordCost), role: 'admin' });
    if ('taken' in created) throw new ConflictError(`The admin username "${username}" is taken by another account.`);
    return { account: created, generatedPassword };
  }

  /** The account's rate-limit plan (free for an account that has gone meanwhile). */
  async planOf(accountId: number): Promise<Plan> {
    return (await this.options.accounts.planOf(this.options.db, accountId)) ?? 'free';
  }

  /** Staff (the plan endpoint, the CLI) put an account on a plan; 404 when there is no such account. */
  async setPlan(username: string, plan: Plan): Promise<{ username: string; plan: Plan }> {
    const updated = await this.options.accounts.setPlan(this.options.db, username, plan);
    if (!updated) throw new NotFoundError(`No account named "${username}".`);
    return { username: updated.username, plan: updated.plan };
  }

  findByUsername(username: string): Promise<AccountRecord | undefined> {
    return this.options.accounts.findByUsername(this.options.db, username);
  }

  /** A new customer account; 409 naming the field when the username or e-mail is taken. */
  async register(trx: Transaction<DB>, input: { username: string; email: string; password: string }): Promise<AccountRecord> {
    const created = await this.options.accounts.create(trx, { ...input, passwordHash: await hashPassword(input.password, this.options.passwordCost), role: 'customer' });
    if ('taken' in created) throw new ConflictError(`That ${created.taken} is already registered.`, [{ field: created.taken, message: 'is already registered' }]);
    return created;
  }

  /**
   * Sets the e-mail and password, with proof (credential-change.rules.ts): a third-party
   * token never may; a new password needs `currentPassword`. A new password ends every other
   * login session and every OAuth grant of the account; its API keys stay valid (decisions.md).
   */
  async changeCredentials(trx: Transaction<DB>, accountId: number, changes: CredentialChanges, actor: Principal | null): Promise<CredentialChangeOutcome> {
    const { accounts } = this.options;
    const current = await accounts.credentialsOf(trx, accountId);
    if (!current) throw new NotFoundError('No such account.');
    const passwordChanged = !(await verifyPassword(changes.password, current.passwordHash));
    const emailChanged = emailKey(changes.email) !== (current.email === null ? null : emailKey(current.email));
    if (actor) {
      const decided = credentialChangeVerdict({ passwordChanged, emailChanged, actorKind: actor.credential.kind, currentPasswordGiven: changes.currentPassword !== undefined });
      if (decided.verdict === 'refused' && decided.reason === 'third_party_token') {
        throw new ForbiddenError('A third-party application\'s token cannot change the password or e-mail: the customer does it with their own login.');
      }
      if (decided.verdict === 'refused') {
        throw new ValidationFailedError('A new password needs the current one: send it as currentPassword.', [{ field: 'currentPassword', message: 'is required to change the password' }]);
      }
      if (decided.verdict === 'check_current_password' && !(await verifyPassword(changes.currentPassword!, current.passwordHash))) {
        throw new ForbiddenError('currentPassword is not this account\'s password: nothing was changed.');
      }
    }
    const passwordHash = passwordChanged ? await hashPassword(changes.password, this.options.passwordCost) : current.passwordHash;
    const taken = await accounts.updateCredentials(trx, accountId, { email: changes.email, passwordHash });
    if (taken) throw new ConflictError(`That ${taken.taken} is already registered.`, [{ field: taken.taken, message: 'is already registered' }]);
    const outcome: CredentialChangeOutcome = { passwordChanged, emailChanged, loginSessionsEnded: 0, oauthGrantsRevoked: 0 };
    if (passwordChanged) {
      const keep = actor?.credential.kind === 'login_token' && actor.accountId === accountId ? actor.credential.id : null;
      Object.assign(outcome, await this.#endCredentialsOnPasswordChange(trx, accountId, keep));
    }
    return outcome;
  }

  /**
   * The operator at the console (`admin reset-password`) sets an account's password: no proof
   * asked, the e-mail kept (an admin may have none). As any new password it ends every login
   * session and OAuth grant of the account; its API keys stay valid. The caller checks the
   * password policy. 404 for no such account; 409 when it is the current password (nothing would end).
   */
  async resetPassword(username: string, password: string): Promise<{ accountId: number; loginSessionsEnded: number; oauthGrantsRevoked: number }> {
    const { db } = this.options;
    // scrypt (~100 ms each) runs before the transaction, so the write lock is held for the writes
    // alone (on SQLite it stops a running server's writers meanwhile); checked again inside.
    const before = await this.#credentialsByUsername(db, username);
    if (await verifyPassword(password, before.passwordHash)) throw new ConflictError('That is already the account\'s password: nothing was changed.');
    const passwordHash = await hashPassword(password, this.options.passwordCost);
    const outcome = await db.transaction().execute(async (trx) => {
      const { account, passwordHash: current } = await this.#credentialsByUsername(trx, username);
      if (current !== before.passwordHash) throw new ConflictError('The account\'s password changed meanwhile: nothing was changed; run the command again.');
      await trx.updateTable('accounts').set({ password_hash: passwordHash, updated_at: this.#clock.iso() }).where('id', '=', account.id).execute();
      return { accountId: account.id, ...(await this.#endCredentialsOnPasswordChange(trx, account.id, null)) };
    });
    // Awaited: the operator's CLI must have told the running instances before it exits.
    await this.options.revocations.revoked({ kind: 'account', accountId: outcome.accountId, exceptLoginSession: null });
    return outcome;
  }

  async #credentialsByUsername(executor: Kysely<DB>, username: string): Promise<{ account: AccountRecord; passwordHash: string }> {
    const account = await this.options.accounts.findByUsername(executor, username);
    const current = account && (await this.options.accounts.credentialsOf(executor, account.id));
    if (!account || !current) throw new NotFoundError(`No account named "${username}".`);
    return { account, passwordHash: current.passwordHash };
  }

  /** What a new password ends: the account's login sessions (but `keep`), its dashboard sign-ins (counted with them) and its OAuth grants. */
  async #endCredentialsOnPasswordChange(trx: Transaction<DB>, accountId: number, keep: number | null): Promise<{ loginSessionsEnded: number; oauthGrantsRevoked: number }> {
    const now = this.#clock.iso();
    const loginSessionsEnded = (await this.options.sessions.revokeAllOf(trx, accountId, keep, now)) + (await this.options.browserSessions.deleteAllOf(trx, accountId));
    let oauthGrantsRevoked = 0;
    for (const listener of this.#passwordChangeListeners) oauthGrantsRevoked += await listener(trx, accountId, now);
    return { loginSessionsEnded, oauthGrantsRevoked };
  }

  /** The account's API keys that are still valid: what a password change leaves working. */
  activeKeysOf(accountId: number): Promise<ApiKeyRecord[]> {
    return this.options.keys.listActive(accountId, this.#clock.iso());
  }

  /** Other modules' credentials (OAuth grants) end in the transaction of a password change. */
  onPasswordChange(listener: PasswordChangeListener): void {
    this.#passwordChangeListeners.push(listener);
  }

  /** Deletes the account; its keys and sessions go with it (ON DELETE CASCADE). Call `forget` once committed. */
  async remove(trx: Transaction<DB>, accountId: number): Promise<void> {
    await this.options.accounts.delete(trx, accountId);
  }

  /**
   * Stops every instance trusting cached credentials of the account (every module's: keys,
   * login tokens, OAuth tokens): this one at once, the others as the broadcast arrives.
   */
  forget(accountId: number, exceptLoginSession: number | null = null): void {
    void this.options.revocations.revoked({ kind: 'account', accountId, exceptLoginSession });
  }
}
