import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ConflictError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import type { AttemptLogRepository, AttemptView } from './attempt-log.repository.js';
import type { EventDeliveriesRepository, EventDelivery, ResendOutcome } from './event-deliveries.repository.js';
import type { WebhookDispatcher } from './webhook.dispatcher.js';
import type { WebhookRecord, WebhookRepository } from './webhook.repository.js';
import { managementRefusal, receives } from './webhook.rules.js';
import { isStaff, type WebhookService } from './webhook.service.js';
import type { OutboxEventsPort } from './webhooks.ports.js';

/** One webhook as an event's page shows it: whether it receives the event, its delivery of it, and the newest attempt. */
export interface EventWebhook {
  webhook: WebhookRecord;
  receives: boolean;
  delivery: EventDelivery | null;
  latestAttempt: AttemptView | null;
}

/** Webhooks looked at per event page, at most (an account has at most 10; staff see a public event's first ones). */
const MAX_WEBHOOKS = 50;

/**
 * One event across the webhooks (the dashboard's event page, issue 31): where each webhook the
 * caller manages stands with it, and "Resend" of it to one webhook.
 */
export class EventDeliveryService {
  constructor(
    private readonly options: {
      db: Kysely<DB>;
      webhooks: WebhookService;
      records: WebhookRepository;
      deliveries: EventDeliveriesRepository;
      log: AttemptLogRepository;
      events: OutboxEventsPort;
      dispatcher: WebhookDispatcher;
      clock?: Clock;
    },
  ) {}

  /**
   * The webhooks the caller manages that receive this event or have a delivery of it: a
   * customer's own; staff, those of the event's account and any with a delivery of it.
   */
  async ofEvent(principal: Principal, eventId: string): Promise<EventWebhook[]> {
    const event = await this.options.events.eventOf(this.options.db, eventId);
    if (!event) return [];
    const staff = isStaff(principal);
    const audienceAccount = /^account:(\d+)$/.exec(event.audience)?.[1];
    const owner = staff ? (audienceAccount === undefined ? null : Number(audienceAccount)) : principal.accountId;
    const listed = owner === null ? [] : await this.options.records.list(owner, 0, MAX_WEBHOOKS);
    const known = new Set(listed.map((webhook) => webhook.id));
    const delivered = staff ? await this.options.deliveries.webhooksWithDelivery(event.outboxId, MAX_WEBHOOKS) : [];
    for (const id of delivered) {
      if (known.has(id)) continue;
      const webhook = await this.options.records.find(id);
      if (webhook) listed.push(webhook);
      known.add(id);
    }
    const mine = listed.filter((webhook) => (staff || webhook.accountId === principal.accountId) && managementRefusal(principal.scopes, webhook.scopes) === null);
    const deliveries = await this.options.deliveries.ofEvent(this.options.db, event.outboxId, mine.map((webhook) => webhook.id));
    const rows: EventWebhook[] = [];
    for (const webhook of mine) {
      const delivery = deliveries.get(webhook.id) ?? null;
      const receiving = receives({ accountId: webhook.accountId, scopes: new Set(webhook.scopes), events: webhook.events }, event);
      if (!receiving && !delivery) continue;
      const latestAttempt = delivery ? ((await this.options.log.latestAttemptOf(webhook.id, eventId)) ?? null) : null;
      rows.push({ webhook, receives: receiving, delivery, latestAttempt });
    }
    return rows;
  }

  /**
   * Sends this event to this webhook again, in one transaction: a new delivery when it has none
   * (a webhook added after the event), the settled one started again otherwise; one still
   * pending is left to its schedule ('pending'). Only an event the webhook receives, or one it
   * has a delivery of (a test), may be resent to it: anything else is a 409.
   */
  async resend(principal: Principal, webhookId: number, eventId: string): Promise<ResendOutcome> {
    const webhook = await this.options.webhooks.managed(principal, webhookId);
    const now = (this.options.clock ?? systemClock).iso();
    const outcome = await this.options.db.transaction().execute(async (trx) => {
      const event = await this.options.events.eventOf(trx, eventId);
      const receiving = event !== undefined && receives({ accountId: webhook.accountId, scopes: new Set(webhook.scopes), events: webhook.events }, event);
      if (!event || (!receiving && !(await this.options.deliveries.ofEvent(trx, event.outboxId, [webhookId])).has(webhookId))) {
        throw new ConflictError(`Webhook ${webhookId} does not receive event ${eventId}: only an event it subscribes to (or was sent) can be sent to it again.`);
      }
      return this.options.deliveries.resend(trx, webhookId, event, webhook.maxAttempts, now);
    });
    if (outcome === 'queued') this.options.dispatcher.wake();
    return outcome;
  }
}
