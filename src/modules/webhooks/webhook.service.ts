import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import { paginate, rowId, twoWayBound, twoWayPage, type CursorCodec, type Page, type PagePosition, type TwoWayKinds, type TwoWayPage } from '../../kernel/pagination.js';
import type { Principal } from '../../kernel/principal.js';
import type { Scope } from '../../kernel/scopes.js';
import type { Outbox } from '../outbox/outbox.module.js';
import { checkWebhookUrl, type AddressGuard } from './address.guard.js';
import type { AttemptDetail, AttemptFilter, AttemptLogRepository, AttemptView, DeadLetter, WebhookScope } from './attempt-log.repository.js';
import type { DeliveryRepository } from './delivery.repository.js';
import type { WebhookDispatcher } from './webhook.dispatcher.js';
import type { LastAttempt, WebhookRecord, WebhookRepository, WebhookSummary } from './webhook.repository.js';
import { deliveryScopes, managementRefusal, patternProblems, rederivedScopes, RETIRING_KEY_REFUSAL, thirdPartyWebhookRefusal } from './webhook.rules.js';
import type { SecretBox } from '../../kernel/secret-box.js';
import { newWebhookSecret } from './webhook.secrets.js';
import type { AttemptOutcome } from './webhook.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** How many events one replay may name. */
export const MAX_REPLAY_EVENTS = 100;

/** Per account: enough for every environment and integration, few enough to fan out cheaply. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
/** How long a rotated-out secret still signs (decisions.md §8). */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
/** Every list's cursors carry the last row's id; each kind is refused by the other lists. */
const WEBHOOK_CURSOR = 'webhook';
/** The attempt log's pages both ways; `newer` is the dashboard's "Newer" (rows newer than the id). */
const ATTEMPT_PAGES: TwoWayKinds = { older: 'attempt', newer: 'attempt-newer' };
const DEAD_LETTER_PAGES: TwoWayKinds = { older: 'dead-letter', newer: 'dead-letter-newer' };

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | null | undefined;
  maxAttempts?: number | undefined;
}

export interface WebhookPatch extends Partial<WebhookInput> {
  active?: boolean | undefined;
}

export interface TestOutcome {
  eventId: string;
  /** A test has one attempt: it is delivered or dead-lettered. */
  outcome: Exclude<AttemptOutcome, 'failed'>;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** A cross-webhook view: one webhook, one account's (staff), or every one the caller may manage. */
export interface DeadLetterQuery {
  webhookId?: number | undefined;
  /** Staff: only this account's webhooks (by username). Anyone else naming another account sees none. */
  account?: string | undefined;
}

export interface WebhookServiceOptions {
  db: Kysely<DB>;
  webhooks: WebhookRepository;
  deliveries: DeliveryRepository;
  /** The reads of the attempt log and the dead letter queue. */
  log: AttemptLogRepository;
  dispatcher: WebhookDispatcher;
  outbox: Outbox;
  secrets: SecretBox;
  guard: AddressGuard;
  /** Signs the cursors of the webhook list and of the attempt log. */
  cursors: CursorCodec;
  /** Production resolves a URL's host at registration and refuses private targets outright. */
  resolveAtRegistration: boolean;
  clock?: Clock;
}

/** Webhook subscriptions as their owners (and staff) manage them. */
export class WebhookService {
  constructor(private readonly options: WebhookServiceOptions) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  /**
   * A webhook an OAuth access token creates is bound to the token's grant (a client-credentials
   * grant too): it is deleted when the grant ends (`endGrants`). A retiring API key makes none.
   */
  async create(principal: Principal, input: WebhookInput): Promise<{ webhook: WebhookRecord; secret: string }> {
    if (principal.credential.retiring) throw new ForbiddenError(RETIRING_KEY_REFUSAL);
    this.#checkEvents(input.events, principal.scopes);
    await checkWebhookUrl(this.options.guard, input.url, this.options.resolveAtRegistration);
    const secret = newWebhookSecret();
    const webhook = await this.options.webhooks.insertWithinLimit(
      {
        accountId: principal.accountId,
        url: input.url,
        events: input.events,
        scopes: deliveryScopes(principal.scopes),
        description: input.description ?? null,
        maxAttempts: input.maxAttempts ?? 6,
        secretCiphertext: this.options.secrets.seal(secret),
        grant: principal.credential.kind === 'oauth_token' ? (principal.credential.grant ?? null) : null,
      },
      MAX_WEBHOOKS_PER_ACCOUNT,
    );
    if (!webhook) throw new ConflictError(`An account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks: delete one, or subscribe an existing one to more events.`);
    return { webhook, secret };
  }

  /** One page, oldest first: the caller's own webhooks, or every account's for staff (`account`: one account's, by username). */
  list(principal: Principal, cursor: string | undefined, limit: number, filter: { account?: string | undefined } = {}): Promise<Page<WebhookRecord>> {
    const { cursors } = this.options;
    const afterId = cursor === undefined ? 0 : cursors.decode(WEBHOOK_CURSOR, cursor, rowId);
    const owner = filter.account !== undefined && filter.account !== '' ? filter.account : null;
    return paginate(limit, (take) => this.options.webhooks.list(isStaff(principal) ? null : principal.accountId, afterId, take, owner), (last) => cursors.encode(WEBHOOK_CURSOR, last.id));
  }

  /** Each webhook's latest attempt (the list's "last outcome"), for webhooks the caller may see. */
  async lastAttempts(principal: Principal, ids: readonly number[]): Promise<Map<number, LastAttempt>> {
    return this.options.webhooks.lastAttempts(ids, isStaff(principal) ? null : principal.accountId);
  }

  /** The overview's counts: the principal's webhooks (staff: everyone's). */
  summary(principal: Principal): Promise<WebhookSummary> {
    return this.options.webhooks.summary(isStaff(principal) ? null : principal.accountId);
  }

  get(principal: Principal, id: number): Promise<WebhookRecord> {
    return this.#owned(principal, id);
  }

  /** The webhook if this caller may act on it (owned or staff, its scopes covered): 404 or 403 otherwise. */
  managed(principal: Principal, id: number): Promise<WebhookRecord> {
    return this.#managed(principal, id);
  }

  async update(principal: Principal, id: number, patch: WebhookPatch): Promise<WebhookRecord> {
    const webhook = await this.#managed(principal, id);
    this.#refuseThirdParty(principal, webhook);
    const own = webhook.accountId === principal.accountId;
    // Staff changing another account's webhook choose events within that webhook's scopes.
    const chooser = own ? principal.scopes : new Set<Scope>(webhook.scopes);
    if (patch.events !== undefined) this.#checkEvents(patch.events, chooser);
    if (patch.url !== undefined) await checkWebhookUrl(this.options.guard, patch.url, this.options.resolveAtRegistration);
    const retargeted = patch.url !== undefined || patch.events !== undefined;
    const updated = await this.options.webhooks.update(id, {
      ...(patch.url !== undefined && { url: patch.url }),
      ...(patch.events !== undefined && { events: patch.events }),
      // A new URL or new events are delivered under the credential that chose them, never more.
      ...(retargeted && { scopes: rederivedScopes(principal.scopes, own, webhook.scopes) }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(patch.maxAttempts !== undefined && { maxAttempts: patch.maxAttempts }),
      ...(patch.active !== undefined && { active: patch.active, disabledReason: null }),
    });
    if (patch.active) this.options.dispatcher.wake();
    return updated!;
  }

  /** OAuth grants ended (revoked, or about to be deleted): what their tokens created goes, in the same transaction. */
  endGrants(trx: Transaction<DB>, grantIds: readonly number[]): Promise<number> {
    return this.options.webhooks.deleteOfGrants(trx, grantIds);
  }

  async delete(principal: Principal, id: number): Promise<void> {
    await this.#managed(principal, id);
    if (principal.credential.retiring) throw new ForbiddenError(RETIRING_KEY_REFUSAL);
    await this.options.webhooks.delete(id);
  }

  /** One page of the attempt log, newest first. A cursor that is not one of ours is a 400 before the webhook is looked up. */
  async attempts(principal: Principal, id: number, filter: AttemptFilter, cursor: string | undefined, limit: number): Promise<Page<AttemptView>> {
    const { items, hasMore, nextCursor } = await this.attemptLog(principal, id, filter, { next: cursor }, limit);
    return { items, hasMore, nextCursor };
  }

  /** The attempt log walked either way (the dashboard's pages): `next` goes to older attempts, `previous` to newer ones. */
  async attemptLog(principal: Principal, id: number, filter: AttemptFilter, position: PagePosition, limit: number): Promise<TwoWayPage<AttemptView>> {
    const bound = twoWayBound(this.options.cursors, position, ATTEMPT_PAGES);
    const checked = checkedFilter(filter);
    await this.#managed(principal, id);
    return twoWayPage(this.options.cursors, bound, limit, (take) => this.options.log.attempts(id, checked, bound, take), ATTEMPT_PAGES, (row) => row.id);
  }

  /** One attempt of this webhook, with the headers and body sent and the start of the answer; another webhook's is a 404. */
  async attempt(principal: Principal, id: number, attemptId: number): Promise<AttemptDetail> {
    await this.#managed(principal, id);
    const attempt = await this.options.log.attempt(id, attemptId);
    if (!attempt) throw new NotFoundError(`Attempt ${attemptId} of webhook ${id} not found.`);
    return attempt;
  }

  /** The newest attempt of an event to this webhook (a test's outcome, shown after the dashboard's redirect). */
  async latestAttemptOf(principal: Principal, id: number, eventId: string): Promise<AttemptView | undefined> {
    await this.#managed(principal, id);
    return this.options.log.latestAttemptOf(id, eventId);
  }

  /** Dead-lettered deliveries, newest first, across the webhooks the caller may manage (or one of them). */
  async deadLetters(principal: Principal, query: DeadLetterQuery, position: PagePosition, limit: number): Promise<TwoWayPage<DeadLetter>> {
    const bound = twoWayBound(this.options.cursors, position, DEAD_LETTER_PAGES);
    const scope = await this.#scope(principal, query);
    return twoWayPage(this.options.cursors, bound, limit, (take) => this.options.log.deadLetters(scope, bound, take), DEAD_LETTER_PAGES, (row) => row.deliveryId);
  }

  /** How many dead-lettered deliveries a replay of all of them would send (a confirmation states it). */
  async countDeadLetters(principal: Principal, query: DeadLetterQuery): Promise<number> {
    return this.options.log.countDead(await this.#scope(principal, query));
  }

  /**
   * Replays dead-lettered deliveries across the caller's webhooks (or one webhook, or one
   * account's for staff): the ones named, at most MAX_REPLAY_EVENTS, or every one. Others'
   * deliveries, and ones no longer dead-lettered, are left alone. Answers how many were re-queued.
   */
  async replayDeadLetters(principal: Principal, query: DeadLetterQuery & { deliveryIds?: readonly number[] | undefined }): Promise<number> {
    if (query.deliveryIds && query.deliveryIds.length > MAX_REPLAY_EVENTS) throw ValidationFailedError.field('deliveryIds', `names at most ${MAX_REPLAY_EVENTS} deliveries`);
    const scope = await this.#scope(principal, query);
    const count = await this.options.deliveries.replayDead(scope, query.deliveryIds ?? null, this.#clock.iso());
    if (count > 0) this.options.dispatcher.wake();
    return count;
  }

  /** Replays one dead-lettered delivery of this webhook (true), or says it is not dead-lettered any more (false); another webhook's is a 404. */
  async replayDeadLetter(principal: Principal, id: number, deliveryId: number): Promise<boolean> {
    await this.#managed(principal, id);
    const count = await this.options.deliveries.replayDead({ webhookIds: [id], accountId: null }, [deliveryId], this.#clock.iso());
    if (count === 0 && !(await this.options.log.hasDelivery(id, deliveryId))) throw new NotFoundError(`Delivery ${deliveryId} of webhook ${id} not found.`);
    if (count > 0) this.options.dispatcher.wake();
    return count > 0;
  }

  /** The webhooks a cross-webhook view covers: staff any (by account), others their own that this credential may manage. */
  async #scope(principal: Principal, query: DeadLetterQuery): Promise<WebhookScope> {
    // `account` names an owner (a username, in any case, as everywhere); one that does not exist owns nothing.
    const owner = query.account ? await this.options.webhooks.accountIdOf(query.account) : null;
    const nothing: WebhookScope = { webhookIds: [], accountId: null };
    if (query.webhookId !== undefined) {
      await this.#managed(principal, query.webhookId);
      return owner === undefined ? nothing : { webhookIds: [query.webhookId], accountId: owner };
    }
    if (isStaff(principal)) return owner === undefined ? nothing : { webhookIds: null, accountId: owner };
    if (owner !== null && owner !== principal.accountId) return nothing;
    const own = await this.options.webhooks.list(principal.accountId, 0, MAX_WEBHOOKS_PER_ACCOUNT * 10, null);
    return { webhookIds: own.filter((webhook) => managementRefusal(principal.scopes, webhook.scopes) === null).map((webhook) => webhook.id), accountId: null };
  }

  /**
   * Sends webhook.test to this webhook now, whatever it subscribes to and even while it is
   * paused, and answers with the attempt. One attempt only: a failed test is dead-lettered
   * at once (and can be replayed), never retried behind the caller's back.
   */
  async test(principal: Principal, id: number, ctx: ChangeContext): Promise<TestOutcome> {
    const webhook = await this.#managed(principal, id);
    const lease = new Date(this.#clock.now() + 2 * 60_000).toISOString();
    const claimed = await this.options.db.transaction().execute(async (trx) => {
      const event = await this.options.outbox.recordOne(
        trx,
        { type: 'webhook.test', audience: { accountId: webhook.accountId }, aggregateType: 'webhook', aggregateId: String(id), data: { webhook_id: String(id), message: 'A test event from Fromagerie: your endpoint is reachable and verifies our signatures.' } },
        ctx,
      );
      const [deliveryId] = await this.options.deliveries.insertDeliveries(trx, [{ webhookId: id, event: { ...event, type: 'webhook.test', audience: `account:${webhook.accountId}` }, maxAttempts: 1, leaseUntil: lease }], this.#clock.iso());
      return (await this.options.deliveries.loadClaimed(trx, [deliveryId!]))[0]!;
    });
    const result = await this.options.dispatcher.attempt(claimed);
    return { eventId: claimed.eventId, outcome: result.outcome === 'delivered' ? 'delivered' : 'dead_lettered', statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error };
  }

  /** Replays this webhook's dead-lettered events, or the settled events of a selection (a time range, chosen events, or both). */
  async replay(principal: Principal, id: number, selection: { from?: string | undefined; to?: string | undefined; eventIds?: readonly string[] | undefined }): Promise<number> {
    await this.#managed(principal, id);
    // Stored times are UTC ISO strings, compared as text: any offset the client sent becomes UTC first.
    const from = selection.from === undefined ? undefined : new Date(selection.from).toISOString();
    const to = selection.to === undefined ? undefined : new Date(selection.to).toISOString();
    if (from !== undefined && to !== undefined && from >= to) throw ValidationFailedError.field('to', 'must be later than from');
    if (selection.eventIds && selection.eventIds.length > MAX_REPLAY_EVENTS) throw ValidationFailedError.field('eventIds', `names at most ${MAX_REPLAY_EVENTS} events`);
    const count = await this.options.deliveries.replay(id, { ...(from && { from }), ...(to && { to }), ...(selection.eventIds && { eventIds: selection.eventIds }) }, this.#clock.iso());
    if (count > 0) this.options.dispatcher.wake();
    return count;
  }

  async rotateSecret(principal: Principal, id: number): Promise<{ secret: string; previousSecretExpiresAt: string }> {
    this.#refuseThirdParty(principal, await this.#managed(principal, id));
    const secret = newWebhookSecret();
    const previousSecretExpiresAt = new Date(this.#clock.now() + ROTATION_OVERLAP_MS).toISOString();
    await this.options.webhooks.rotateSecret(id, this.options.secrets.seal(secret), previousSecretExpiresAt);
    return { secret, previousSecretExpiresAt };
  }

  /** A retiring key changes no webhook; an app's token changes only its app's webhooks: the account's own would outlive the grant (issue 28 §1, §5). */
  #refuseThirdParty(principal: Principal, webhook: WebhookRecord): void {
    if (principal.credential.retiring) throw new ForbiddenError(RETIRING_KEY_REFUSAL);
    const refusal = thirdPartyWebhookRefusal(principal.credential, webhook.oauthClientId);
    if (refusal) throw new ForbiddenError(refusal);
  }

  /** Someone else's webhook is a 404, as if it did not exist: ids cannot be probed. */
  async #owned(principal: Principal, id: number): Promise<WebhookRecord> {
    const webhook = await this.options.webhooks.find(id);
    if (!webhook || (!isStaff(principal) && webhook.accountId !== principal.accountId)) throw new NotFoundError(`Webhook ${id} not found.`);
    return webhook;
  }

  /** Owned (or staff), and the credential covers every scope the webhook delivers under (403 otherwise). */
  async #managed(principal: Principal, id: number): Promise<WebhookRecord> {
    const webhook = await this.#owned(principal, id);
    const refusal = managementRefusal(principal.scopes, webhook.scopes);
    if (refusal) throw new ForbiddenError(refusal);
    return webhook;
  }

  #checkEvents(events: readonly string[], scopes: ReadonlySet<Scope>): void {
    const problems = patternProblems(events, scopes);
    const unknown = problems.filter((p) => p.problem === 'unknown');
    if (unknown.length > 0) {
      throw new ValidationFailedError(
        `No event kind matches ${unknown.map((p) => `"${p.pattern}"`).join(', ')}: see docs/events.md for the kinds.`,
        unknown.map((p) => ({ field: 'events', message: `${p.pattern} matches no event kind` })),
      );
    }
    const forbidden = problems.filter((p) => p.problem === 'forbidden');
    if (forbidden.length > 0) {
      throw new ForbiddenError(`This credential may not receive ${forbidden.map((p) => `${p.pattern} (needs ${p.scope})`).join(', ')}.`);
    }
  }

}

export function isStaff(principal: Principal): boolean {
  return principal.scopes.has('admin');
}

/** Times as UTC ISO text (stored times compare as text), and a range that is one. */
function checkedFilter(filter: AttemptFilter): AttemptFilter {
  const from = filter.from === undefined ? undefined : new Date(filter.from).toISOString();
  const to = filter.to === undefined ? undefined : new Date(filter.to).toISOString();
  if (from !== undefined && to !== undefined && from >= to) throw ValidationFailedError.field('to', 'must be later than from');
  return { ...filter, ...(from !== undefined && { from }), ...(to !== undefined && { to }) };
}
