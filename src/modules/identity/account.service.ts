import { generatePassword, hashPassword } from './password.js';
import type { AccountRecord, AccountRepository } from './account.repository.js';

export interface AdminBootstrapResult {
  account: AccountRecord;
  /** Set only when the admin was created now with a generated password, to print once. */
  generatedPassword: string | undefined;
}

export class AccountService {
  constructor(private readonly accounts: AccountRepository) {}

  /** Creates the first admin from the environment if it does not exist yet. Idempotent. */
  async ensureAdmin(username: string, password: string | undefined): Promise<AdminBootstrapResult> {
    const existing = await this.accounts.findByUsername(username);
    if (existing) return { account: existing, generatedPassword: undefined };
    const generatedPassword = password ? undefined : generatePassword();
    const account = await this.accounts.create({
      username,
      passwordHash: await hashPassword(password ?? (generatedPassword as string)),
      role: 'admin',
    });
    return { account, generatedPassword };
  }

  findByUsername(username: string): Promise<AccountRecord | undefined> {
    return this.accounts.findByUsername(username);
  }
}
