import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Plan } from '../../kernel/plans.js';
import { toIso } from '../../db/columns.js';
import { isPostgres } from '../../db/dialect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { prepared } from '../../db/prepared.js';
import type { Role } from '../../kernel/scopes.js';
import type { AccountFacts } from './identity.ports.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export interface AccountRecord {
  id: number;
  username: string;
  role: Role;
}

/** Usernames and e-mail addresses are unique regardless of case. */
export const usernameKey = (username: string) => username.toLowerCase();
export const emailKey = (email: string) => email.trim().toLowerCase();

/** Which unique field a failed insert or update collided on, when it was one of ours. */
export type TakenField = 'username' | 'email';
function takenField(error: unknown): TakenField | undefined {
  if (!isUniqueViolation(error)) return undefined;
  const text = `${(error as { constraint?: string }).constraint ?? ''} ${(error as Error).message}`;
  if (text.includes('email_key')) return 'email';
  if (text.includes('username')) return 'username';
  return undefined;
}

// Prepared: every order and webhook read asks it (one shape per page size).
const usernamesById = prepared((db, values: { ids: number[] }) => db.selectFrom('accounts').select(['id', 'username']).where('id', 'in', values.ids));

const FACT_COLUMNS = ['id', 'username', 'email', 'role', 'created_at'] as const;
const toFacts = (row: { id: number; username: string; email: string | null; role: Role; created_at: Date | string }): AccountFacts => ({
  id: Number(row.id),
  username: row.username,
  email: row.email,
  role: row.role,
  createdAt: toIso(row.created_at),
});

/** Also what identity offers other modules as its AccountDirectory (identity.module.ts). */
export class AccountRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock = systemClock,
  ) {}

  async usernamesOf(executor: Kysely<DB>, ids: readonly number[]): Promise<Map<number, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    return new Map((await usernamesById(executor, { ids: unique })).map((row) => [Number(row.id), row.username]));
  }

  async idOfUsername(executor: Kysely<DB>, username: string): Promise<number | undefined> {
    const row = await executor.selectFrom('accounts').select('id').where('username_key', '=', usernameKey(username)).executeTakeFirst();
    return row && Number(row.id);
  }

  async findById(executor: Kysely<DB>, id: number): Promise<AccountFacts | undefined> {
    const row = await executor.selectFrom('accounts').select(FACT_COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && toFacts(row);
  }

  async findFactsByUsername(executor: Kysely<DB>, username: string): Promise<AccountFacts | undefined> {
    const row = await executor.selectFrom('accounts').select(FACT_COLUMNS).where('username_key', '=', usernameKey(username)).executeTakeFirst();
    return row && toFacts(row);
  }

  async lock(trx: Transaction<DB>, id: number): Promise<void> {
    if (isPostgres(trx)) await trx.selectFrom('accounts').select('id').where('id', '=', id).forUpdate().execute();
  }

  async findByUsername(executor: Kysely<DB>, username: string): Promise<AccountRecord | undefined> {
    return executor.selectFrom('accounts').select(['id', 'username', 'role']).where('username_key', '=', usernameKey(username)).executeTakeFirst();
  }

  /** The account with its password hash: only login and password checks ask for it. */
  async findLoginByUsername(username: string): Promise<(AccountRecord & { passwordHash: string }) | undefined> {
    return this.db
      .selectFrom('accounts')
      .select(['id', 'username', 'role', 'password_hash as passwordHash'])
      .where('username_key', '=', usernameKey(username))
      .executeTakeFirst();
  }

  /** What proves and names the account: its e-mail and password hash. */
  async credentialsOf(executor: Kysely<DB>, accountId: number): Promise<{ email: string | null; passwordHash: string } | undefined> {
    const row = await executor.selectFrom('accounts').select(['email', 'password_hash']).where('id', '=', accountId).executeTakeFirst();
    return row && { email: row.email, passwordHash: row.password_hash };
  }

  async passwordHashOf(executor: Kysely<DB>, accountId: number): Promise<string | undefined> {
    return (await executor.selectFrom('accounts').select('password_hash').where('id', '=', accountId).executeTakeFirst())?.password_hash;
  }

  async planOf(executor: Kysely<DB>, accountId: number): Promise<Plan | undefined> {
    return (await executor.selectFrom('accounts').select('plan').where('id', '=', accountId).executeTakeFirst())?.plan;
  }

  /** The account with its new plan, or undefined when there is no such account. */
  async setPlan(executor: Kysely<DB>, username: string, plan: Plan): Promise<{ id: number; username: string; plan: Plan } | undefined> {
    const row = await executor.updateTable('accounts').set({ plan, updated_at: this.clock.iso() }).where('username_key', '=', usernameKey(username)).returning(['id', 'username', 'plan']).executeTakeFirst();
    return row && { id: Number(row.id), username: row.username, plan: row.plan };
  }

  /** Inserts the account; `{ taken }` instead when the username or e-mail is in use. */
  async create(
    executor: Kysely<DB>,
    input: { username: string; passwordHash: string; role: Role; email?: string | null },
  ): Promise<AccountRecord | { taken: TakenField }> {
    const now = this.clock.iso();
    try {
      return await executor
        .insertInto('accounts')
        .values({
          username: input.username,
          username_key: usernameKey(input.username),
          email: input.email ?? null,
          email_key: input.email ? emailKey(input.email) : null,
          password_hash: input.passwordHash,
          role: input.role,
          // Staff are not throttled in normal use; customers start on Free (decisions.md §7).
          plan: input.role === 'admin' ? 'enterprise' : 'free',
          created_at: now,
          updated_at: now,
        })
        .returning(['id', 'username', 'role'])
        .executeTakeFirstOrThrow();
    } catch (error) {
      const taken = takenField(error);
      if (taken) return { taken };
      throw error;
    }
  }

  /** Changes e-mail and password hash; `{ taken }` when the e-mail belongs to another account. */
  async updateCredentials(trx: Transaction<DB>, accountId: number, changes: { email: string; passwordHash: string }): Promise<{ taken: TakenField } | undefined> {
    try {
      await trx
        .updateTable('accounts')
        .set({ email: changes.email, email_key: emailKey(changes.email), password_hash: changes.passwordHash, updated_at: this.clock.iso() })
        .where('id', '=', accountId)
        .execute();
      return undefined;
    } catch (error) {
      const taken = takenField(error);
      if (taken) return { taken };
      throw error;
    }
  }

  async delete(trx: Transaction<DB>, accountId: number): Promise<void> {
    await trx.deleteFrom('accounts').where('id', '=', accountId).execute();
  }
}
