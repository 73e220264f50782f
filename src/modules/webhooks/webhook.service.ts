import dns from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { nowIso } from '../../db/columns.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import { paginate, rowId, type CursorCodec, type Page } from '../../kernel/pagination.js';
import type { Principal } from '../../kernel/principal.js';
import type { Scope } from '../../kernel/scopes.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { AddressGuard } from './address.guard.js';
import type { AttemptView, DeliveryRepository } from './delivery.repository.js';
import type { WebhookDispatcher } from './webhook.dispatcher.js';
import type { WebhookRecord, WebhookRepository } from './webhook.repository.js';
import { deliveryScopes, managementRefusal, patternProblems, rederivedScopes } from './webhook.rules.js';
import { newWebhookSecret, type SecretBox } from './webhook.secrets.js';
import type { AttemptOutcome } from './webhook.table.js';

/** Per account: enough for every environment and integration, few enough to fan out cheaply. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
/** How long a rotated-out secret still signs (decisions.md §8). */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
/** Both lists' cursors carry the last row's id; each kind is refused by the other list. */
const WEBHOOK_CURSOR = 'webhook';
const ATTEMPT_CURSOR = 'attempt';

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

export interface WebhookServiceOptions {
  db: Kysely<DB>;
  webhooks: WebhookRepository;
  deliveries: DeliveryRepository;
  dispatcher: WebhookDispatcher;
  outbox: Outbox;
  secrets: SecretBox;
  guard: AddressGuard;
  /** Signs the cursors of the webhook list and of the attempt log. */
  cursors: CursorCodec;
  /** Production resolves a URL's host at registration and refuses private targets outright. */
  resolveAtRegistration: boolean;
}

/** Webhook subscriptions as their owners (and staff) manage them. */
export class WebhookService {
  constructor(private readonly options: WebhookServiceOptions) {}

  async create(principal: Principal, input: WebhookInput): Promise<{ webhook: WebhookRecord; secret: string }> {
    this.#checkEvents(input.events, principal.scopes);
    await this.#checkUrl(input.url);
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
      },
      MAX_WEBHOOKS_PER_ACCOUNT,
    );
    if (!webhook) throw new ConflictError(`An account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks: delete one, or subscribe an existing one to more events.`);
    return { webhook, secret };
  }

  /** One page, oldest first: the caller's own webhooks, or every account's for staff. */
  list(principal: Principal, cursor: string | undefined, limit: number): Promise<Page<WebhookRecord>> {
    const { cursors } = this.options;
    const afterId = cursor === undefined ? 0 : cursors.decode(WEBHOOK_CURSOR, cursor, rowId);
    return paginate(limit, (take) => this.options.webhooks.list(isStaff(principal) ? null : principal.accountId, afterId, take), (last) => cursors.encode(WEBHOOK_CURSOR, last.id));
  }

  get(principal: Principal, id: number): Promise<WebhookRecord> {
    return this.#owned(principal, id);
  }

  async update(principal: Principal, id: number, patch: WebhookPatch): Promise<WebhookRecord> {
    const webhook = await this.#managed(principal, id);
    const own = webhook.accountId === principal.accountId;
    // Staff changing another account's webhook choose events within that webhook's scopes.
    const chooser = own ? principal.scopes : new Set<Scope>(webhook.scopes);
    if (patch.events !== undefined) this.#checkEvents(patch.events, chooser);
    if (patch.url !== undefined) await this.#checkUrl(patch.url);
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

  async delete(principal: Principal, id: number): Promise<void> {
    await this.#managed(principal, id);
    await this.options.webhooks.delete(id);
  }

  /** One page of the attempt log, newest first. A cursor that is not one of ours is a 400 before the webhook is looked up. */
  async attempts(principal: Principal, id: number, filter: { outcome?: AttemptOutcome; eventType?: string }, cursor: string | undefined, limit: number): Promise<Page<AttemptView>> {
    const { cursors } = this.options;
    const beforeId = cursor === undefined ? null : cursors.decode(ATTEMPT_CURSOR, cursor, rowId);
    await this.#managed(principal, id);
    return paginate(limit, (take) => this.options.deliveries.attempts(id, filter, beforeId, take), (last) => cursors.encode(ATTEMPT_CURSOR, last.id));
  }

  /**
   * Sends webhook.test to this webhook now, whatever it subscribes to and even while it is
   * paused, and answers with the attempt. One attempt only: a failed test is dead-lettered
   * at once (and can be replayed), never retried behind the caller's back.
   */
  async test(principal: Principal, id: number, ctx: ChangeContext): Promise<TestOutcome> {
    const webhook = await this.#managed(principal, id);
    const lease = new Date(Date.now() + 2 * 60_000).toISOString();
    const claimed = await this.options.db.transaction().execute(async (trx) => {
      const event = await this.options.outbox.recordOne(
        trx,
        { type: 'webhook.test', audience: { accountId: webhook.accountId }, aggregateType: 'webhook', aggregateId: String(id), data: { webhook_id: String(id), message: 'A test event from Fromagerie: your endpoint is reachable and verifies our signatures.' } },
        ctx,
      );
      const [deliveryId] = await this.options.deliveries.insertDeliveries(trx, [{ webhookId: id, event: { ...event, type: 'webhook.test', audience: `account:${webhook.accountId}` }, maxAttempts: 1, leaseUntil: lease }], nowIso());
      return (await this.options.deliveries.loadClaimed(trx, [deliveryId!]))[0]!;
    });
    const result = await this.options.dispatcher.attempt(claimed);
    return { eventId: claimed.eventId, outcome: result.outcome === 'delivered' ? 'delivered' : 'dead_lettered', statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error };
  }

  async replay(principal: Principal, id: number, range: { from?: string | undefined; to?: string | undefined }): Promise<number> {
    await this.#managed(principal, id);
    // Stored times are UTC ISO strings, compared as text: any offset the client sent becomes UTC first.
    const from = range.from === undefined ? undefined : new Date(range.from).toISOString();
    const to = range.to === undefined ? undefined : new Date(range.to).toISOString();
    if (from !== undefined && to !== undefined && from >= to) throw ValidationFailedError.field('to', 'must be later than from');
    const count = await this.options.deliveries.replay(id, { ...(from && { from }), ...(to && { to }) }, nowIso());
    if (count > 0) this.options.dispatcher.wake();
    return count;
  }

  async rotateSecret(principal: Principal, id: number): Promise<{ secret: string; previousSecretExpiresAt: string }> {
    await this.#managed(principal, id);
    const secret = newWebhookSecret();
    const previousSecretExpiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString();
    await this.options.webhooks.rotateSecret(id, this.options.secrets.seal(secret), previousSecretExpiresAt);
    return { secret, previousSecretExpiresAt };
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

  /** http(s), no credentials or fragment; in production a host whose every address is public. */
  async #checkUrl(text: string): Promise<void> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw ValidationFailedError.field('url', 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw ValidationFailedError.field('url', 'must use http or https');
    if (url.username || url.password) throw ValidationFailedError.field('url', 'must not carry credentials: authenticate deliveries by their signature');
    if (url.hash) throw ValidationFailedError.field('url', 'must not have a fragment');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const refused = ValidationFailedError.field('url', 'must point at a public address (loopback, private and link-local addresses are refused)');
    if (isIP(host) !== 0) {
      if (!this.options.guard.allows(host)) throw refused;
      return;
    }
    if (!this.options.resolveAtRegistration) return;
    const addresses = await dns.lookup(host, { all: true }).catch(() => []);
    if (addresses.length === 0) throw ValidationFailedError.field('url', `host ${host} could not be resolved`);
    // Any refused address refuses the URL: which one a connection gets is up to the resolver.
    if (!addresses.every((entry) => this.options.guard.allows(entry.address))) throw refused;
  }
}

function isStaff(principal: Principal): boolean {
  return principal.scopes.has('admin');
}
