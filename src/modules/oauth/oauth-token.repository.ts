import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Role } from '../../kernel/scopes.js';
import type { AccountDirectory } from '../identity/identity.module.js';
import type { OAuthTokenKind } from './oauth.table.js';
import type { GrantEndings } from './grant-endings.js';

/** A stored token with what it stands for: its client and account are identity's, asked of it. */
export interface StoredToken {
  id: number;
  grantId: number;
  kind: OAuthTokenKind;
  scopes: string;
  redirectUri: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  expiresAt: Date;
  /** When the code was exchanged or the refresh token rotated. */
  consumedAt: Date | null;
  /** The token or its whole grant. */
  revoked: boolean;
  clientRowId: number;
  clientId: string;
  accountId: number;
  username: string;
  role: Role;
}

type TokenRow = {
  id: number;
  account_id: number;
  grant_id: number;
  kind: OAuthTokenKind;
  scopes: string;
  redirect_uri: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: Date | string;
  consumed_at: Date | string | null;
  revoked_at: Date | string | null;
  grant_revoked_at: Date | string | null;
  client_row_id: number;
};

function toStored(row: TokenRow, clientId: string, account: { username: string; role: Role }): StoredToken {
  return {
    id: Number(row.id),
    grantId: Number(row.grant_id),
    kind: row.kind,
    scopes: row.scopes,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    codeChallengeMethod: row.code_challenge_method,
    expiresAt: new Date(row.expires_at),
    consumedAt: row.consumed_at === null ? null : new Date(row.consumed_at),
    revoked: row.revoked_at !== null || row.grant_revoked_at !== null,
    clientRowId: Number(row.client_row_id),
    clientId,
    accountId: Number(row.account_id),
    username: account.username,
    role: account.role,
  };
}

export interface NewToken {
  grantId: number;
  kind: OAuthTokenKind;
  tokenHash: string;
  scopes: string;
  expiresAt: string;
  now: string;
  redirectUri?: string | null;
  codeChallenge?: string | null;
  codeChallengeMethod?: string | null;
}

export class OAuthTokenRepository {
  constructor(
    private readonly db: Kysely<DB>,
    /** Identity's accounts and clients: who a token acts for, and its client's public id. */
    private readonly identity: { accounts: AccountDirectory; clientIdOf: (clientRowId: number) => Promise<string | undefined> },
    /** Told of every grant this repository ends, in the transaction that ends it. */
    private readonly endings: GrantEndings,
  ) {}

  async createGrant(input: { clientRowId: number; accountId: number; scopes: string; now: string }): Promise<number> {
    const row = await this.db
      .insertInto('oauth_grants')
      .values({ client_id: input.clientRowId, account_id: input.accountId, scopes: input.scopes, created_at: input.now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async insertToken(input: NewToken, db: Kysely<DB> = this.db): Promise<number> {
    const row = await db
      .insertInto('oauth_tokens')
      .values({
        grant_id: input.grantId,
        kind: input.kind,
        token_hash: input.tokenHash,
        scopes: input.scopes,
        redirect_uri: input.redirectUri ?? null,
        code_challenge: input.codeChallenge ?? null,
        code_challenge_method: input.codeChallengeMethod ?? null,
        expires_at: input.expiresAt,
        created_at: input.now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  /** The token with this hash, whatever its state (a consumed one is evidence of reuse); undefined also once its client or account is gone. */
  async findByHash(tokenHash: string, kind?: OAuthTokenKind): Promise<StoredToken | undefined> {
    let query = this.db
      .selectFrom('oauth_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select([
        't.id',
        't.grant_id',
        't.kind',
        't.scopes',
        't.redirect_uri',
        't.code_challenge',
        't.code_challenge_method',
        't.expires_at',
        't.consumed_at',
        't.revoked_at',
        'g.revoked_at as grant_revoked_at',
        'g.client_id as client_row_id',
        'g.account_id',
      ])
      .where('t.token_hash', '=', tokenHash);
    if (kind) query = query.where('t.kind', '=', kind);
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    // Both at once: two round trips where the join was one, on a cache miss of the resolver.
    const [clientId, account] = await Promise.all([this.identity.clientIdOf(Number(row.client_row_id)), this.identity.accounts.findById(this.db, Number(row.account_id))]);
    return clientId === undefined || !account ? undefined : toStored(row, clientId, account);
  }

  /** Who a client-credentials token acts as: the account that registered the client. */
  async accountById(accountId: number): Promise<{ id: number; username: string; role: Role } | undefined> {
    const account = await this.identity.accounts.findById(this.db, accountId);
    return account && { id: account.id, username: account.username, role: account.role };
  }

  /**
   * Refresh-token rotation, all or nothing: the presented token is consumed and its successors
   * stored in one transaction, so a request refused or failing on the way consumes nothing.
   * False, with nothing written, when another rotation (or a revocation) of it came first.
   */
  async rotate(presentedId: number, successors: NewToken[], now: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await this.consume(presentedId, now, trx))) return false;
      for (const token of successors) await this.insertToken(token, trx);
      return true;
    });
  }

  /**
   * Marks a code exchanged or a refresh token rotated; false when another request did first.
   * Exactly one of concurrent callers wins: the conditional UPDATE takes the row lock on
   * PostgreSQL, and a second one re-reads the committed row (READ COMMITTED) and matches
   * nothing; SQLite runs writers one at a time.
   */
  async consume(tokenId: number, now: string, db: Kysely<DB> = this.db): Promise<boolean> {
    const result = await db
      .updateTable('oauth_tokens')
      .set({ consumed_at: now })
      .where('id', '=', tokenId)
      .where('consumed_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * RFC 7009 for an access token: the token alone, unless it was the last usable token of its
   * grant (a client-credentials or implicit grant has one; a code grant whose refresh token is
   * gone): then the grant ends too, and what it created with it. True when the grant ended.
   */
  async revokeAccessToken(tokenId: number, grantId: number, now: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('oauth_tokens').set({ revoked_at: now }).where('id', '=', tokenId).where('revoked_at', 'is', null).execute();
      const live = await trx
        .selectFrom('oauth_tokens')
        .select('id')
        .where('grant_id', '=', grantId)
        .where('revoked_at', 'is', null)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .limit(1)
        .executeTakeFirst();
      return !live && (await this.revokeGrants(trx, [grantId], now)).length > 0;
    });
  }

  /** The grant (reuse of a code or refresh token, RFC 7009) and every token issued under it; what it created ends with it. */
  async revokeGrant(grantId: number, now: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.revokeGrants(trx, [grantId], now);
    });
  }

  /** Revokes, in the caller's transaction, every live grant of the account and their tokens; answers how many grants. */
  async revokeGrantsOf(trx: Transaction<DB>, accountId: number, now: string): Promise<number> {
    const grants = await trx.selectFrom('oauth_grants').select('id').where('account_id', '=', accountId).where('revoked_at', 'is', null).execute();
    return (await this.revokeGrants(trx, grants.map((g) => Number(g.id)), now)).length;
  }

  /**
   * Every path that revokes grants comes here: the grants (those not revoked already) and their
   * tokens are revoked and the grant endings told, in `trx`. Answers the grants it revoked.
   */
  async revokeGrants(trx: Transaction<DB>, grantIds: readonly number[], now: string): Promise<number[]> {
    if (grantIds.length === 0) return [];
    const revoked = await trx.updateTable('oauth_grants').set({ revoked_at: now }).where('id', 'in', [...grantIds]).where('revoked_at', 'is', null).returning('id').execute();
    const ids = revoked.map((g) => Number(g.id));
    if (ids.length === 0) return [];
    await trx.updateTable('oauth_tokens').set({ revoked_at: now }).where('grant_id', 'in', ids).where('revoked_at', 'is', null).execute();
    await this.endings.ended(trx, ids);
    return ids;
  }

  /**
   * Grants none of whose tokens (code, access or refresh) can be used any more at `now`: the app
   * can do nothing under them, so they end now (revoked, the endings told: what they created
   * goes), not a day later when pruning deletes their tokens. Answers how many ended.
   */
  async endSpentGrants(now: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const spent = await trx
        .selectFrom('oauth_grants')
        .select('id')
        .where('revoked_at', 'is', null)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('oauth_tokens')
                .select('oauth_tokens.id')
                .whereRef('oauth_tokens.grant_id', '=', 'oauth_grants.id')
                .where('oauth_tokens.revoked_at', 'is', null)
                .where('oauth_tokens.consumed_at', 'is', null)
                .where('oauth_tokens.expires_at', '>', now),
            ),
          ),
        )
        .execute();
      return (await this.revokeGrants(trx, spent.map((g) => Number(g.id)), now)).length;
    });
  }

  /** Expired tokens and grants left with none, once nothing can use them; what such a grant created goes with it. */
  async pruneExpired(before: string): Promise<number> {
    const result = await this.db.deleteFrom('oauth_tokens').where('expires_at', '<', before).executeTakeFirst();
    await this.db.transaction().execute(async (trx) => {
      const empty = await trx
        .selectFrom('oauth_grants')
        .select('id')
        .where('created_at', '<', before)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('oauth_tokens').select('oauth_tokens.id').whereRef('oauth_tokens.grant_id', '=', 'oauth_grants.id'))))
        .execute();
      const ids = empty.map((g) => Number(g.id));
      if (ids.length === 0) return;
      await this.endings.ended(trx, ids);
      // A token issued meanwhile keeps its grant: only grants still without one go.
      await trx
        .deleteFrom('oauth_grants')
        .where('id', 'in', ids)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('oauth_tokens').select('oauth_tokens.id').whereRef('oauth_tokens.grant_id', '=', 'oauth_grants.id'))))
        .execute();
    });
    return Number(result.numDeletedRows);
  }
}
