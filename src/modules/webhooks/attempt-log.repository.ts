import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toBool, toIso, toIsoOrNull } from '../../db/columns.js';
import type { IdBound } from '../../kernel/pagination.js';
import type { AccountDirectory } from '../identity/identity.module.js';
import { envelopeOf } from './webhook.envelope.js';
import type { AttemptOutcome, DeliveryState, ErrorClass, WebhookAttemptTable, WebhookDeliveryTable } from './webhook.table.js';
import type { OutboxEventsPort } from './webhooks.ports.js';

/**
 * The reads behind the attempt log and the dead letter queue (the dashboard's pages and their
 * API, issue 19): keyset walks both ways over ids, newest first, on the (webhook_id, id) index
 * of attempts and the partial indexes of dead-lettered deliveries; never a count of the log.
 */

/** An attempt as the log lists it (without what it sent and received: see AttemptDetail). */
export interface AttemptView {
  id: number;
  deliveryId: number;
  webhookId: number;
  eventId: string;
  eventType: string;
  attempt: number;
  outcome: AttemptOutcome;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  errorClass: ErrorClass | null;
  nextAttemptAt: string | null;
  createdAt: string;
  /** Its delivery's state now. */
  deliveryState: DeliveryState;
  /** No later attempt of its delivery exists. */
  latest: boolean;
  /** A failed attempt whose delivery still waits for the next one (see OutcomeFilter). */
  pending: boolean;
  /** The last attempt of a delivery that is dead-lettered now: replaying it sends the event again. */
  replayable: boolean;
}

/** An attempt with what was sent and what came back. */
export interface AttemptDetail extends AttemptView {
  /** Null for attempts made before the headers were kept (migration 0020). */
  requestHeaders: Record<string, string> | null;
  /** The body sent, rebuilt from the event (the same bytes on every attempt). */
  requestBody: string;
  responseBody: string | null;
}

/**
 * Outcomes to list: the stored ones, and `pending`, the failed attempts whose delivery still
 * waits for its next attempt (the delivery is pending and nothing was sent since): a part of
 * `failed`, so asking for both is asking for `failed`.
 */
export type OutcomeFilter = AttemptOutcome | 'pending';

export interface AttemptFilter {
  outcomes?: readonly OutcomeFilter[];
  eventType?: string;
  /** Attempts made at or after this instant (ISO, UTC). */
  from?: string;
  /** Attempts made before this instant (ISO, UTC). */
  to?: string;
}

/** Which webhooks a cross-webhook read or replay covers: these ids, and/or every webhook of one account, or all. */
export interface WebhookScope {
  webhookIds: readonly number[] | null;
  accountId: number | null;
}

export interface DeadLetter {
  deliveryId: number;
  webhookId: number;
  webhookUrl: string;
  owner: string;
  eventId: string;
  eventType: string;
  attempts: number;
  deadLetteredAt: string;
  lastStatusCode: number | null;
  lastError: string | null;
}

/**
 * Dead-lettered deliveries of `scope`, joined to their webhook; `'dead'` written out, so the
 * partial indexes apply. Only those of this deployment's environment's events (`events`).
 */
export function deadIn(db: Kysely<DB>, events: OutboxEventsPort, scope: WebhookScope) {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .where('d.state', '=', sql.lit('dead'))
    .where('d.outbox_id', 'in', events.selected({}));
  if (scope.webhookIds) query = query.where('d.webhook_id', 'in', [...scope.webhookIds]);
  if (scope.accountId !== null) query = query.where('w.account_id', '=', scope.accountId);
  return query;
}

/** A later attempt of the same delivery (`a` being the attempt at hand). */
function laterAttempt(eb: ExpressionBuilder<DB & { a: DB['webhook_attempts'] }, 'a'>) {
  return eb.selectFrom('webhook_attempts as l').select('l.id').whereRef('l.delivery_id', '=', 'a.delivery_id').whereRef('l.id', '>', 'a.id');
}

/** An attempt as the log reads it: its own columns (derived from the table), its delivery's state, and whether it is the latest. */
type AttemptRow = Pick<Selectable<WebhookAttemptTable>, 'id' | 'delivery_id' | 'event_id' | 'event_type' | 'attempt' | 'outcome' | 'status_code' | 'latency_ms' | 'error' | 'error_class' | 'next_attempt_at' | 'created_at'> &
  Pick<Selectable<WebhookDeliveryTable>, 'state'> & { latest: boolean | number | null };

function toAttemptView(row: AttemptRow, webhookId: number): AttemptView {
  const latest = toBool(row.latest ?? false);
  return {
    id: Number(row.id),
    deliveryId: Number(row.delivery_id),
    webhookId,
    eventId: row.event_id,
    eventType: row.event_type,
    attempt: row.attempt,
    outcome: row.outcome,
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    error: row.error,
    errorClass: row.error_class,
    nextAttemptAt: toIsoOrNull(row.next_attempt_at),
    createdAt: toIso(row.created_at),
    deliveryState: row.state,
    latest,
    pending: row.outcome === 'failed' && row.state === 'pending' && latest,
    replayable: row.outcome === 'dead_lettered' && row.state === 'dead' && latest,
  };
}

export class AttemptLogRepository {
  constructor(
    private readonly db: Kysely<DB>,
    /** Identity's accounts: dead letters name their webhook's owner. */
    private readonly accounts: AccountDirectory,
    /** The outbox's rows: an attempt's body is rebuilt from its event. */
    private readonly events: OutboxEventsPort,
  ) {}

  /** The attempt log of one webhook, newest first, one side of `bound`. */
  async attempts(webhookId: number, filter: AttemptFilter, bound: IdBound, limit: number): Promise<AttemptView[]> {
    let query = this.#attemptQuery(webhookId);
    const outcomes = filter.outcomes ?? [];
    if (outcomes.length > 0) {
      const stored = outcomes.filter((o): o is AttemptOutcome => o !== 'pending');
      const pendingAlone = outcomes.includes('pending') && !outcomes.includes('failed');
      query = query.where((eb) => {
        const either = [];
        if (stored.length > 0) either.push(eb('a.outcome', 'in', stored));
        if (pendingAlone) either.push(eb.and([eb('a.outcome', '=', 'failed'), eb('d.state', '=', 'pending'), eb.not(eb.exists(laterAttempt(eb)))]));
        return eb.or(either);
      });
    }
    if (filter.eventType) query = query.where('a.event_type', '=', filter.eventType);
    if (filter.from) query = query.where('a.created_at', '>=', filter.from);
    if (filter.to) query = query.where('a.created_at', '<', filter.to);
    if (bound && 'older' in bound) query = query.where('a.id', '<', bound.older);
    if (bound && 'newer' in bound) query = query.where('a.id', '>', bound.newer);
    const newer = bound !== null && 'newer' in bound;
    const rows = await query.orderBy('a.id', newer ? 'asc' : 'desc').limit(limit).execute();
    if (newer) rows.reverse();
    return rows.map((row) => toAttemptView(row, webhookId));
  }

  /** One attempt of this webhook, with what was sent and what came back. */
  async attempt(webhookId: number, attemptId: number): Promise<AttemptDetail | undefined> {
    const row = await this.#attemptQuery(webhookId).select(['a.request_headers', 'a.response_body', 'd.outbox_id']).where('a.id', '=', attemptId).executeTakeFirst();
    if (!row) return undefined;
    const event = (await this.events.envelopesOf(this.db, [Number(row.outbox_id)])).get(Number(row.outbox_id));
    if (!event) return undefined;
    return {
      ...toAttemptView(row, webhookId),
      requestHeaders: row.request_headers === null ? null : (JSON.parse(row.request_headers) as Record<string, string>),
      requestBody: envelopeOf(event),
      responseBody: row.response_body,
    };
  }

  /** The newest attempt of one event to this webhook (the outcome of a test). */
  async latestAttemptOf(webhookId: number, eventId: string): Promise<AttemptView | undefined> {
    const row = await this.#attemptQuery(webhookId).where('a.event_id', '=', eventId).orderBy('a.id', 'desc').limit(1).executeTakeFirst();
    return row && toAttemptView(row, webhookId);
  }

  #attemptQuery(webhookId: number) {
    return this.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select((eb) => [
        'a.id', 'a.delivery_id', 'a.event_id', 'a.event_type', 'a.attempt', 'a.outcome', 'a.status_code', 'a.latency_ms', 'a.error', 'a.error_class', 'a.next_attempt_at', 'a.created_at',
        'd.state',
        eb.not(eb.exists(laterAttempt(eb))).as('latest'),
      ])
      .where('a.webhook_id', '=', webhookId)
      // Attempts of this deployment's environment's events only, as every read here.
      .where('d.outbox_id', 'in', this.events.selected({}));
  }

  /**
   * Dead-lettered deliveries, newest first (by delivery, so by event), over the partial
   * indexes of dead rows; with the last attempt's status and error.
   */
  async deadLetters(scope: WebhookScope, bound: IdBound, limit: number): Promise<DeadLetter[]> {
    if (scope.webhookIds?.length === 0) return [];
    let query = this.#dead(scope)
      .select((eb) => [
        'd.id', 'd.webhook_id', 'w.url', 'w.account_id', 'd.event_id', 'd.event_type', 'd.attempts', 'd.updated_at',
        eb.selectFrom('webhook_attempts as t').select('t.status_code').whereRef('t.delivery_id', '=', 'd.id').orderBy('t.id', 'desc').limit(1).as('last_status'),
        eb.selectFrom('webhook_attempts as t').select('t.error').whereRef('t.delivery_id', '=', 'd.id').orderBy('t.id', 'desc').limit(1).as('last_error'),
      ]);
    if (bound && 'older' in bound) query = query.where('d.id', '<', bound.older);
    if (bound && 'newer' in bound) query = query.where('d.id', '>', bound.newer);
    const newer = bound !== null && 'newer' in bound;
    const rows = await query.orderBy('d.id', newer ? 'asc' : 'desc').limit(limit).execute();
    if (newer) rows.reverse();
    const owners = await this.accounts.usernamesOf(this.db, rows.map((row) => Number(row.account_id)));
    return rows.map((row) => ({
      deliveryId: Number(row.id),
      webhookId: Number(row.webhook_id),
      webhookUrl: row.url,
      owner: owners.get(Number(row.account_id)) ?? '',
      eventId: row.event_id,
      eventType: row.event_type,
      attempts: row.attempts,
      deadLetteredAt: toIso(row.updated_at),
      lastStatusCode: row.last_status ?? null,
      lastError: row.last_error ?? null,
    }));
  }

  /** How many dead-lettered deliveries `scope` holds (for a confirmation: one range of a partial index). */
  async countDead(scope: WebhookScope): Promise<number> {
    if (scope.webhookIds?.length === 0) return 0;
    const row = await this.#dead(scope).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Whether this delivery is this webhook's. */
  async hasDelivery(webhookId: number, deliveryId: number): Promise<boolean> {
    const row = await this.db.selectFrom('webhook_deliveries').select('id').where('id', '=', deliveryId).where('webhook_id', '=', webhookId).where('outbox_id', 'in', this.events.selected({})).executeTakeFirst();
    return row !== undefined;
  }

  #dead(scope: WebhookScope) {
    return deadIn(this.db, this.events, scope);
  }
}
