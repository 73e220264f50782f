import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Role } from '../../kernel/scopes.js';

/** What another module may know of an account: never its password hash or plan. */
export interface AccountFacts {
  id: number;
  username: string;
  email: string | null;
  role: Role;
  /** ISO 8601, UTC. */
  createdAt: string;
}

/**
 * What identity offers other modules about accounts, inside their own transaction (pass it as
 * `executor`): the `accounts` table is identity's alone (test/architecture/table-ownership.test.ts),
 * so a module that used to join it asks here, one query for a whole page.
 */
export interface AccountDirectory {
  /** Usernames by account id, in one query; an id with no account (deleted) has no entry. */
  usernamesOf(executor: Kysely<DB>, ids: readonly number[]): Promise<Map<number, string>>;
  /** The id of the account with this username, in any case (usernames are unique regardless of case); undefined when none. */
  idOfUsername(executor: Kysely<DB>, username: string): Promise<number | undefined>;
  findById(executor: Kysely<DB>, id: number): Promise<AccountFacts | undefined>;
  /** By username, in any case. */
  findByUsername(executor: Kysely<DB>, username: string): Promise<AccountFacts | undefined>;
  /**
   * Locks the account's row until `trx` ends, so checks of a per-account limit (webhooks per
   * account) serialise on PostgreSQL; SQLite runs one writer at a time already.
   */
  lock(trx: Transaction<DB>, id: number): Promise<void>;
}
