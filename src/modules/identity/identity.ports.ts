import type { Kysely, OperandExpression, Transaction } from 'kysely';
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

/** An OAuth client as another module may show it. */
export interface OAuthClientName {
  /** The public id (`cl_…`). */
  clientId: string;
  name: string;
}

/**
 * What identity offers about the OAuth clients it registers (the `oauth_clients` table is
 * identity's): oauth's authorized-apps list and its revocation ask here, inside their own
 * statement or transaction.
 */
export interface OAuthClientDirectory {
  /** Public ids and names by row id, in one query; a client that is gone has no entry. */
  namesOf(executor: Kysely<DB>, ids: readonly number[]): Promise<Map<number, OAuthClientName>>;
  /**
   * Row ids of the clients `accountId` did not register (only the one with this public
   * `clientId`, when given), as a subquery the caller's statement filters by: a client's own
   * registrant holds client-credentials grants, which authorize no one.
   */
  notRegisteredBy(accountId: number, clientId?: string): OperandExpression<number>;
}
