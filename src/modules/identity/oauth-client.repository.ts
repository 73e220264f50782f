import type { Kysely, OperandExpression } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import type { OAuthClientType } from './identity.table.js';
import type { OAuthClientView } from './oauth-client.schema.js';
import type { OAuthClientName } from './identity.ports.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

// Never secret_hash: it leaves the database only for the comparison at the token endpoint.
const PUBLIC_COLUMNS = ['id', 'client_id', 'name', 'client_type', 'redirect_uris', 'grants', 'scopes', 'created_at', 'updated_at'] as const;

type Row = { id: number; client_id: string; name: string; client_type: OAuthClientType; redirect_uris: string; grants: string; scopes: string; created_at: Date | string; updated_at: Date | string };

function toView(row: Row): OAuthClientView {
  return {
    id: row.id,
    clientId: row.client_id,
    name: row.name,
    type: row.client_type,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    grants: row.grants.split(' ').filter(Boolean) as OAuthClientView['grants'],
    scopes: row.scopes.split(' ').filter(Boolean) as OAuthClientView['scopes'],
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

export class OAuthClientRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock = systemClock,
  ) {}

  async insert(input: { clientId: string; secretHash: string | null; name: string; type: OAuthClientType; redirectUris: string[]; grants: string[]; scopes: string[]; createdBy: number | null }): Promise<OAuthClientView> {
    const now = this.clock.iso();
    const row = await this.db
      .insertInto('oauth_clients')
      .values({
        client_id: input.clientId,
        secret_hash: input.secretHash,
        name: input.name,
        client_type: input.type,
        redirect_uris: JSON.stringify(input.redirectUris),
        grants: input.grants.join(' '),
        scopes: input.scopes.join(' '),
        created_by: input.createdBy,
        created_at: now,
        updated_at: now,
      })
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirstOrThrow();
    return toView(row);
  }

  /** The client as the token endpoint authenticates it: with its secret's hash and its owner. */
  async findForAuthentication(clientId: string): Promise<(OAuthClientView & { secretHash: string | null; createdBy: number | null }) | undefined> {
    const row = await this.db.selectFrom('oauth_clients').select([...PUBLIC_COLUMNS, 'secret_hash', 'created_by']).where('client_id', '=', clientId).executeTakeFirst();
    return row && { ...toView(row), secretHash: row.secret_hash, createdBy: row.created_by };
  }

  /** The public client_id of the client with this row id. */
  async clientIdOf(id: number): Promise<string | undefined> {
    return (await this.db.selectFrom('oauth_clients').select('client_id').where('id', '=', id).executeTakeFirst())?.client_id;
  }

  /** Public ids and names by row id, in one query in the caller's executor. */
  async namesOf(executor: Kysely<DB>, ids: readonly number[]): Promise<Map<number, OAuthClientName>> {
    if (ids.length === 0) return new Map();
    const rows = await executor.selectFrom('oauth_clients').select(['id', 'client_id', 'name']).where('id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((row) => [Number(row.id), { clientId: row.client_id, name: row.name }]));
  }

  /** Row ids of clients `accountId` did not register (a registrant-less client counts), optionally only the one with `clientId`: a subquery. */
  notRegisteredBy(accountId: number, clientId?: string): OperandExpression<number> {
    return this.db
      .selectFrom('oauth_clients')
      .select('id')
      .where((eb) => eb.or([eb('created_by', 'is', null), eb('created_by', '!=', accountId)]))
      .$if(clientId !== undefined, (q) => q.where('client_id', '=', clientId!));
  }

  async list(): Promise<OAuthClientView[]> {
    return (await this.db.selectFrom('oauth_clients').select(PUBLIC_COLUMNS).orderBy('id').execute()).map(toView);
  }

  /** Returns false when there was no such client. */
  async delete(id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('oauth_clients').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
