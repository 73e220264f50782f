import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { OAuthClientDirectory } from '../identity/identity.module.js';
import type { OAuthTokenRepository } from './oauth-token.repository.js';

/** A grant an account gave a client, still in force, with its client's public id and name. */
export interface LiveGrantRow {
  grantId: number;
  clientId: string;
  clientName: string;
  scopes: string;
  createdAt: Date | string;
  /** When a token was last issued under it (the code, its exchange, a refresh). */
  lastTokenAt: Date | string | null;
}

/**
 * The grants of the authorization flows, seen from the account that gave them (the dashboard's
 * "Authorized apps" and /v2/customer/{username}/authorized-apps). Client-credentials grants
 * (account = the client's registrant) are no authorization of anyone's: never listed here.
 */
export class OAuthGrantRepository {
  constructor(
    private readonly db: Kysely<DB>,
    /** Identity's clients: which ones an account registered, and their public ids and names. */
    private readonly clients: OAuthClientDirectory,
    /** Revokes grants, their tokens and what they created, in one transaction. */
    private readonly tokens: OAuthTokenRepository,
  ) {}

  /** Unrevoked grants of the account holding a token still usable at `now` (a live access or refresh token, or a code not yet exchanged). */
  async liveOf(accountId: number, now: string): Promise<LiveGrantRow[]> {
    const rows = await this.db
      .selectFrom('oauth_grants as g')
      .select((eb) => [
        'g.id',
        'g.client_id',
        'g.scopes',
        'g.created_at',
        eb.selectFrom('oauth_tokens as l').select((e) => e.fn.max('l.created_at').as('at')).whereRef('l.grant_id', '=', 'g.id').as('last_token_at'),
      ])
      .where('g.account_id', '=', accountId)
      .where('g.revoked_at', 'is', null)
      .where('g.client_id', 'in', this.clients.notRegisteredBy(accountId))
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('oauth_tokens as t')
            .select('t.id')
            .whereRef('t.grant_id', '=', 'g.id')
            .where('t.revoked_at', 'is', null)
            .where('t.consumed_at', 'is', null)
            .where('t.expires_at', '>', now),
        ),
      )
      .orderBy('g.id')
      .execute();
    const clients = await this.clients.namesOf(this.db, rows.map((row) => Number(row.client_id)));
    return rows.flatMap((row) => {
      const client = clients.get(Number(row.client_id));
      if (!client) return [];
      return [{ grantId: Number(row.id), clientId: client.clientId, clientName: client.name, scopes: row.scopes, createdAt: row.created_at, lastTokenAt: (row.last_token_at as Date | string | null) ?? null }];
    });
  }

  /** Revokes every unrevoked grant the account gave the client (by its public client_id), all their tokens and what they created, at once; answers the grants' ids. */
  async revokeClientOf(accountId: number, clientId: string, now: string): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const grants = await trx
        .selectFrom('oauth_grants')
        .select('id')
        .where('account_id', '=', accountId)
        .where('client_id', 'in', this.clients.notRegisteredBy(accountId, clientId))
        .where('revoked_at', 'is', null)
        .execute();
      return this.tokens.revokeGrants(trx, grants.map((grant) => Number(grant.id)), now);
    });
  }
}
