import type { ExpressionBuilder, Kysely, Selectable, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AccountDirectory } from '../identity/identity.module.js';
import { toBool, toIso, toIsoOrNull } from '../../db/columns.js';
import type { Scope } from '../../kernel/scopes.js';
import type { AttemptOutcome, WebhookTable } from './webhook.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

// Never the secrets' ciphertexts: they leave the database only to sign (secretsOf).
const VIEW_COLUMNS = ['w.id', 'w.account_id', 'w.url', 'w.events', 'w.description', 'w.max_attempts', 'w.scopes', 'w.active', 'w.disabled_reason', 'w.previous_secret_expires_at', 'w.oauth_client_id', 'w.created_at', 'w.updated_at'] as const;

export interface WebhookRecord {
  id: number;
  accountId: number;
  owner: string;
  url: string;
  events: string[];
  description: string | null;
  maxAttempts: 5 | 6;
  scopes: Scope[];
  active: boolean;
  disabledReason: string | null;
  previousSecretExpiresAt: string | null;
  /** The OAuth client whose access token created it (it lives only as long as that authorization); null: the account's own. */
  oauthClientId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A webhook as read, less its secrets (derived from the table: a column added there is a column here). */
type Row = Omit<Selectable<WebhookTable>, 'secret_ciphertext' | 'previous_secret_ciphertext' | 'oauth_grant_id'>;

function toRecord(row: Row, owner: string): WebhookRecord {
  return {
    id: Number(row.id),
    accountId: Number(row.account_id),
    owner,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    maxAttempts: row.max_attempts as 5 | 6,
    scopes: row.scopes.split(' ').filter(Boolean) as Scope[],
    active: toBool(row.active),
    disabledReason: row.disabled_reason,
    previousSecretExpiresAt: toIsoOrNull(row.previous_secret_expires_at),
    oauthClientId: row.oauth_client_id,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  scopes?: Scope[];
  description?: string | null;
  maxAttempts?: number;
  active?: boolean;
  disabledReason?: string | null;
}

/** A webhook's latest attempt: the list's "last outcome". */
export interface LastAttempt {
  outcome: AttemptOutcome;
  statusCode: number | null;
  at: string;
}

export interface WebhookSummary {
  webhooks: number;
  failing: number;
  deadLettered: number;
}

/** Webhooks' SQL names only webhooks' tables: owners' usernames come from identity's AccountDirectory, one query per read. */
export class WebhookRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly accounts: AccountDirectory,
    private readonly clock: Clock = systemClock,
  ) {}

  #select() {
    return this.db.selectFrom('webhooks as w').select(VIEW_COLUMNS);
  }

  /** The rows as records, with their owners' usernames (one lookup for all). A webhook goes with its account (ON DELETE CASCADE): one whose account went meanwhile is left out, as the join left it. */
  async #records(rows: readonly Row[]): Promise<WebhookRecord[]> {
    const owners = await this.accounts.usernamesOf(this.db, rows.map((row) => Number(row.account_id)));
    return rows.flatMap((row) => {
      const owner = owners.get(Number(row.account_id));
      return owner === undefined ? [] : [toRecord(row, owner)];
    });
  }

  /**
   * Inserts unless the account already has `max` webhooks (then null). The account's row is
   * locked first on PostgreSQL, so concurrent registrations cannot both pass the count
   * (SQLite writers are serial already).
   */
  async insertWithinLimit(
    input: { accountId: number; url: string; events: string[]; scopes: Scope[]; description: string | null; maxAttempts: number; secretCiphertext: string; grant: { id: number; clientId: string } | null },
    max: number,
  ): Promise<WebhookRecord | null> {
    const now = this.clock.iso();
    const id = await this.db.transaction().execute(async (trx) => {
      await this.accounts.lock(trx, input.accountId);
      const existing = await trx.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', input.accountId).executeTakeFirstOrThrow();
      if (Number(existing.n) >= max) return null;
      const row = await trx
        .insertInto('webhooks')
        .values({
          account_id: input.accountId,
          url: input.url,
          events: JSON.stringify(input.events),
          description: input.description,
          max_attempts: input.maxAttempts,
          scopes: input.scopes.join(' '),
          active: true,
          disabled_reason: null,
          secret_ciphertext: input.secretCiphertext,
          oauth_grant_id: input.grant?.id ?? null,
          oauth_client_id: input.grant?.clientId ?? null,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    });
    return id === null ? null : ((await this.find(id)) ?? null);
  }

  async find(id: number): Promise<WebhookRecord | undefined> {
    const row = await this.#select().where('w.id', '=', id).executeTakeFirst();
    return row && (await this.#records([row]))[0];
  }

  /** The id of the account with this username (in any case), for filters by owner; undefined when none. */
  accountIdOf(username: string): Promise<number | undefined> {
    return this.accounts.idOfUsername(this.db, username);
  }

  /** Oldest first, after `afterId`; one account's, or everyone's when `accountId` is null; only `owner`'s (a username, in any case) when given. */
  async list(accountId: number | null, afterId: number, limit: number, owner: string | null = null): Promise<WebhookRecord[]> {
    let query = this.#select().where('w.id', '>', afterId);
    if (accountId !== null) query = query.where('w.account_id', '=', accountId);
    if (owner !== null) {
      const ownerId = await this.accounts.idOfUsername(this.db, owner);
      if (ownerId === undefined) return [];
      query = query.where('w.account_id', '=', ownerId);
    }
    return this.#records(await query.orderBy('w.id').limit(limit).execute());
  }

  /** The latest attempt of each of these webhooks (of `accountId`'s only, unless null): one step down the (webhook_id, id) index each. */
  async lastAttempts(ids: readonly number[], accountId: number | null): Promise<Map<number, LastAttempt>> {
    if (ids.length === 0) return new Map();
    const latest = (eb: ExpressionBuilder<DB & { w: DB['webhooks'] }, 'w'>) =>
      eb.selectFrom('webhook_attempts as t').whereRef('t.webhook_id', '=', 'w.id').orderBy('t.id', 'desc').limit(1);
    let query = this.db
      .selectFrom('webhooks as w')
      .select((eb) => ['w.id', latest(eb).select('t.outcome').as('outcome'), latest(eb).select('t.status_code').as('status_code'), latest(eb).select('t.created_at').as('created_at')])
      .where('w.id', 'in', [...ids]);
    if (accountId !== null) query = query.where('w.account_id', '=', accountId);
    const rows = await query.execute();
    const found = new Map<number, LastAttempt>();
    for (const row of rows) {
      if (row.outcome === null || row.created_at === null) continue;
      found.set(Number(row.id), { outcome: row.outcome, statusCode: row.status_code ?? null, at: toIso(row.created_at) });
    }
    return found;
  }

  /**
   * The overview's counts, one account's or everyone's: webhooks; failing ones (disabled, or
   * whose latest attempt did not deliver); dead-lettered deliveries waiting for a replay.
   */
  async summary(accountId: number | null): Promise<WebhookSummary> {
    let hooks = this.db
      .selectFrom('webhooks as w')
      .select((eb) => [
        eb.fn.countAll<number>().as('webhooks'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(
                eb.or([
                  eb('w.active', '=', false),
                  eb(eb.selectFrom('webhook_attempts as t').select('t.outcome').whereRef('t.webhook_id', '=', 'w.id').orderBy('t.id', 'desc').limit(1), '<>', 'delivered'),
                ]),
              )
              .then(1)
              .else(0)
              .end(),
          )
          .as('failing'),
      ]);
    let dead = this.db.selectFrom('webhook_deliveries as d').innerJoin('webhooks as w', 'w.id', 'd.webhook_id').select((eb) => eb.fn.countAll<number>().as('n')).where('d.state', '=', 'dead');
    if (accountId !== null) {
      hooks = hooks.where('w.account_id', '=', accountId);
      dead = dead.where('w.account_id', '=', accountId);
    }
    const [counts, dl] = await Promise.all([hooks.executeTakeFirstOrThrow(), dead.executeTakeFirstOrThrow()]);
    return { webhooks: Number(counts.webhooks), failing: Number(counts.failing ?? 0), deadLettered: Number(dl.n) };
  }

  async update(id: number, changes: WebhookChanges): Promise<WebhookRecord | undefined> {
    await this.db
      .updateTable('webhooks')
      .set({
        ...(changes.url !== undefined && { url: changes.url }),
        ...(changes.events !== undefined && { events: JSON.stringify(changes.events) }),
        ...(changes.scopes !== undefined && { scopes: changes.scopes.join(' ') }),
        ...(changes.description !== undefined && { description: changes.description }),
        ...(changes.maxAttempts !== undefined && { max_attempts: changes.maxAttempts }),
        ...(changes.active !== undefined && { active: changes.active }),
        ...(changes.disabledReason !== undefined && { disabled_reason: changes.disabledReason }),
        updated_at: this.clock.iso(),
      })
      .where('id', '=', id)
      .execute();
    return this.find(id);
  }

  /** The new secret signs from now on; the old one too until `previousExpiresAt`. */
  async rotateSecret(id: number, secretCiphertext: string, previousExpiresAt: string): Promise<void> {
    await this.db
      .updateTable('webhooks')
      .set((eb) => ({ previous_secret_ciphertext: eb.ref('secret_ciphertext'), secret_ciphertext: secretCiphertext, previous_secret_expires_at: previousExpiresAt, updated_at: this.clock.iso() }))
      .where('id', '=', id)
      .execute();
  }

  /**
   * Deletes, in the caller's transaction, every webhook these OAuth grants' tokens created; their
   * deliveries (pending ones included) and attempt log go with them (ON DELETE CASCADE).
   */
  async deleteOfGrants(trx: Transaction<DB>, grantIds: readonly number[]): Promise<number> {
    if (grantIds.length === 0) return 0;
    const result = await trx.deleteFrom('webhooks').where('oauth_grant_id', 'in', [...grantIds]).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async delete(id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
