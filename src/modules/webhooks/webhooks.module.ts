import { DeliveryInsightsRepository } from './delivery-insights.repository.js';
import { DeliveryInsightsService } from './delivery-insights.service.js';
import type { Kysely, OperandExpression, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { FeatureModule, Job } from '../../kernel/module.js';
import type { CursorCodec } from '../../kernel/pagination.js';
import type { Keys } from '../../kernel/key-ring.js';
import type { Outbox, OutboxConsumers, OutboxRetainer } from '../outbox/outbox.module.js';
import type { AccountDirectory } from '../identity/identity.module.js';
import { AddressGuard } from './address.guard.js';
import { AttemptLogRepository } from './attempt-log.repository.js';
import { DeliveryRepository } from './delivery.repository.js';
import { DeliveryStatusRepository, type DeliveryBacklog } from './delivery-status.repository.js';
import { WebhookDispatcher } from './webhook.dispatcher.js';
import { WebhookRepository } from './webhook.repository.js';
import { webhookOpenApi } from './webhook.openapi.js';
import { webhookRoutes } from './webhook.routes.js';
import { webhookSecretBox } from './webhook.secrets.js';
import { WebhookSender, type SendResult } from './webhook.sender.js';
import type { Tracing } from '../../kernel/tracing.js';
import { WebhookService } from './webhook.service.js';
import { WebhookSecretsRepository } from './webhook-secrets.repository.js';
import { WebhookSecretsService } from './webhook-secrets.service.js';
import type { WebhookSettings } from './webhook.settings.js';
import type { OutboxEventsPort } from './webhooks.ports.js';
import { EventDeliveryService } from './event-deliveries.service.js';
import { EventDeliveriesRepository } from './event-deliveries.repository.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export type { WebhookSettings } from './webhook.settings.js';
export type { ResealCounts, WebhookSecretsService } from './webhook-secrets.service.js';
export type { WebhookService, DeadLetterQuery } from './webhook.service.js';
export type { EventDeliveryService, EventWebhook } from './event-deliveries.service.js';
export type { EventDelivery, ResendOutcome } from './event-deliveries.repository.js';
export type { PagePosition, TwoWayPage } from '../../kernel/pagination.js';
export { MAX_REPLAY_EVENTS, MAX_WEBHOOKS_PER_ACCOUNT } from './webhook.service.js';
export { defaultAccountConcurrency } from './dispatch.rules.js';
export { webhookHealth, type WebhookHealth } from './webhook.rules.js';
export { WebhookInput } from './webhook.schema.js';
export type { AttemptDetail, AttemptFilter, AttemptView, DeadLetter, OutcomeFilter } from './attempt-log.repository.js';
export type { LastAttempt, WebhookRecord } from './webhook.repository.js';
export type { DeliveryBacklog } from './delivery-status.repository.js';
export type { OutboxEventsPort } from './webhooks.ports.js';
export type { DeliveryInsightsService, AttemptStats, FailedAttempt, ObjectDelivery } from './delivery-insights.service.js';


export interface WebhooksOptions {
  db: Kysely<DB>;
  /** Spans for deliveries and their sends (docs/operations.md, "Traces"); none when absent. */
  tracer?: Tracing | undefined;
  environment: CheeseEnv;
  outbox: Outbox;
  /** Identity's accounts: webhooks' owners (usernames), and the lock that bounds webhooks per account. */
  accounts: AccountDirectory;
  /** The outbox's consumers: the fan-out is the one named 'webhooks'. */
  outboxConsumers: OutboxConsumers;
  /** The outbox's rows: the events deliveries point at (their envelopes, a replay's selection). */
  outboxRows: OutboxEventsPort;
  /** The key ring's 'webhook-secrets' keys: webhook secrets are encrypted at rest under the current one. */
  secretKeys: Keys;
  /** Signs the cursors of the webhook list and the attempt log. */
  cursors: CursorCodec;
  settings: WebhookSettings;
  /** Subscribes to commits of outbox rows (the database's commit signal). */
  afterOutboxCommit: (listener: () => void) => () => void;
  log: (message: string, details: Record<string, unknown>) => void;
  /** Told of every attempt's result (the metrics). */
  onAttempt?: (result: SendResult) => void;
  clock?: Clock;
}

/** What the event log asks of webhooks: how each event's deliveries stand (issue 21). */
export interface DeliveryStatus {
  /** Per outbox id, deliveries not delivered yet (pending or dead-lettered), of `accountId`'s webhooks (null: all). */
  undeliveredCounts(outboxIds: readonly number[], accountId: number | null): Promise<Map<number, number>>;
  /** Outbox ids with a delivery not delivered yet, of `accountId`'s webhooks (null: all), as a subquery to filter the log by. */
  undeliveredOutboxIds(accountId: number | null): OperandExpression<number>;
}

/** What the metrics ask of webhooks: the deliveries' backlog, in the caller's executor (under its statement timeout). */
export interface DeliveryBacklogReader {
  backlog(executor: Kysely<DB>, now: string): Promise<DeliveryBacklog>;
}

export type WebhooksModule = FeatureModule<{
  webhooks: WebhookService;
  /** One event across the webhooks: their deliveries of it, and a resend to one (the dashboard's event page). */
  eventDeliveries: EventDeliveryService;
  /** Deliveries summed for the dashboard: of one object's events, and over a window (issue 31). */
  insights: DeliveryInsightsService;
  /** OAuth grants ended: the webhooks their tokens created are deleted in the caller's transaction (oauth's hook). */
  grantsEnded: (trx: Transaction<DB>, grantIds: readonly number[]) => Promise<void>;
  dispatcher: WebhookDispatcher;
  openapi: () => Record<string, unknown>;
  /** Pruning the outbox keeps every row a kept delivery points at. */
  outboxRetainer: OutboxRetainer;
  deliveryStatus: DeliveryStatus;
  deliveryBacklog: DeliveryBacklogReader;
  /** The stored secrets across an APP_SECRET rotation: re-sealing them (`fromagerie secrets re-encrypt`), counting those no key opens. */
  storedSecrets: WebhookSecretsService;
}>;

const HOUR_MS = 3_600_000;

/** Webhooks: subscriptions, and delivery of outbox events to them (decisions.md §8). */
export function createWebhooksModule(options: WebhooksOptions): WebhooksModule {
  const { db, settings } = options;
  const clock = options.clock ?? systemClock;
  const guard = new AddressGuard({ allowLoopback: options.environment !== 'production' });
  const sender = new WebhookSender({ timeoutMs: settings.timeoutMs, guard, socketsPerEndpoint: settings.endpointConcurrency, onResult: options.onAttempt, clock, tracer: options.tracer });
  const secrets = webhookSecretBox(options.secretKeys);
  const webhookRepository = new WebhookRepository(db, options.accounts, clock);
  const deliveries = new DeliveryRepository(db, options.outboxRows);
  const status = new DeliveryStatusRepository(db);
  const dispatcher = new WebhookDispatcher({ db, deliveries, consumers: options.outboxConsumers, sender, secrets, settings, log: options.log, clock, tracer: options.tracer });
  const attemptLog = new AttemptLogRepository(db, options.accounts, options.outboxRows);
  const webhooks = new WebhookService({ db, webhooks: webhookRepository, deliveries, log: attemptLog, dispatcher, outbox: options.outbox, secrets, guard, cursors: options.cursors, resolveAtRegistration: options.environment === 'production', clock });
  const eventDeliveries = new EventDeliveryService({ db, webhooks, records: webhookRepository, deliveries: new EventDeliveriesRepository(db), log: attemptLog, events: options.outboxRows, dispatcher, clock });
  let unsubscribe: (() => void) | undefined;

  const prune: Job = {
    name: 'webhooks.prune',
    everyMs: HOUR_MS,
    run: (now = clock.date()) => deliveries.prune(new Date(now.getTime() - settings.retentionDays * 24 * HOUR_MS).toISOString()),
  };

  return {
    name: 'webhooks',
    routes: async (app) => {
      await app.register(webhookRoutes, { webhooks });
    },
    jobs: [prune],
    workers: [
      {
        name: 'webhooks.dispatcher',
        start() {
          unsubscribe = options.afterOutboxCommit(() => dispatcher.outboxCommitted());
          dispatcher.start();
        },
        async stop() {
          unsubscribe?.();
          await dispatcher.stop();
          sender.close();
        },
      },
    ],
    provides: {
      webhooks,
      eventDeliveries,
      insights: new DeliveryInsightsService(new DeliveryInsightsRepository(db, options.outboxRows)),
      grantsEnded: async (trx, grantIds) => {
        await webhooks.endGrants(trx, grantIds);
      },
      dispatcher,
      openapi: webhookOpenApi,
      outboxRetainer: { lowestRetainedOutboxId: () => status.lowestOutboxId() },
      deliveryStatus: { undeliveredCounts: (ids, accountId) => status.undeliveredCounts(ids, accountId), undeliveredOutboxIds: (accountId) => status.undeliveredOutboxIds(accountId) },
      deliveryBacklog: { backlog: (executor, now) => status.backlog(executor, now) },
      storedSecrets: new WebhookSecretsService({ secrets: new WebhookSecretsRepository(db), box: secrets }),
    },
  };
}
