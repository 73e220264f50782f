import path from 'node:path';
import type { AppConfig } from './config.js';
import type { Database } from './db/database.js';
import { NO_BROADCAST, type ChangeBroadcast } from './db/change-broadcast.js';
import type { Job, Worker } from './kernel/module.js';
import { API_VERSION } from './version.js';
import { createOutboxModule, type OutboxModule } from './modules/outbox/outbox.module.js';
import { createIdentityModule, type IdentityModule } from './modules/identity/identity.module.js';
import { createCatalogueModule, type CatalogueModule } from './modules/catalogue/catalogue.module.js';
import { createHealthModule, type HealthModule } from './modules/health/health.module.js';
import { createCustomersModule, type CustomersModule } from './modules/customers/customers.module.js';
import { createOAuthModule, type OAuthModule } from './modules/oauth/oauth.module.js';
import { createLimitsModule, type LimitsModule } from './modules/limits/limits.module.js';
import { createIdempotencyModule, type IdempotencyModule } from './modules/idempotency/idempotency.module.js';
import { createOrdersModule, type OrdersModule } from './modules/orders/orders.module.js';
import { createWebhooksModule, type WebhooksModule } from './modules/webhooks/webhooks.module.js';
import { createEventsModule, type EventsModule } from './modules/events/events.module.js';
import { createDashboardModule, type DashboardModule } from './modules/dashboard/dashboard.module.js';
import { createMetricsModule, type MetricsModule } from './modules/metrics/metrics.module.js';
import { createRequestLogModule, type RequestLogModule } from './modules/request-log/request-log.module.js';
import type { CredentialResolver } from './kernel/principal.js';
import { CursorCodec } from './kernel/pagination.js';
import { KeyRing } from './kernel/key-ring.js';
import { systemClock } from './kernel/clock.js';

/** Creating, rolling or revoking a live key (and the like) asks for the password again after this long (issue 19). */
const STEP_UP_AFTER_MS = 10 * 60_000;

/** In the order their routes are registered (and listed in the OpenAPI document). */
export interface Modules {
  limits: LimitsModule;
  idempotency: IdempotencyModule;
  outbox: OutboxModule;
  health: HealthModule;
  identity: IdentityModule;
  catalogue: CatalogueModule;
  customers: CustomersModule;
  oauth: OAuthModule;
  orders: OrdersModule;
  webhooks: WebhooksModule;
  events: EventsModule;
  requestLog: RequestLogModule;
  dashboard: DashboardModule;
  metrics: MetricsModule;
}

/**
 * The composition root: builds each module once from the configuration and wires the ports
 * between them. Nothing under src/modules imports this file (the boundary check enforces it).
 * `broadcast` carries cache invalidations between instances (the app opens it; the CLI needs none).
 */
export function createModules(
  config: AppConfig,
  database: Database,
  log: (message: string, details: Record<string, unknown>) => void = () => {},
  broadcast: ChangeBroadcast = NO_BROADCAST,
): Modules {
  const { db } = database;
  // The one clock every module reads (src/kernel/clock.ts): a test's, or the system's.
  const clock = config.clock ?? systemClock;
  // Every key derived from APP_SECRET (and APP_SECRET_PREVIOUS), each module given its own purpose's.
  const keys = new KeyRing(config);
  // One codec signs every list's cursors; each list names its own kind, so none accepts another's.
  const cursors = new CursorCodec(keys.keys('pagination-cursors'));
  const limits = createLimitsModule({
    settings: config.rateLimits,
    environment: config.env,
    redisUrl: config.redisUrl,
    redisKeyPrefix: config.redisKeyPrefix,
    warn: (message) => log(message, {}),
    planCacheMs: config.planCacheMs,
    clock,
    tracer: config.tracer,
  });
  const bruteForce = limits.provides.limiter.bruteForce.bind(limits.provides.limiter);
  const outbox = createOutboxModule({ db, environment: config.env, apiVersion: API_VERSION, retentionDays: config.eventRetentionDays ?? 30, clock });
  const requestLog = createRequestLogModule({
    db,
    cursors,
    enabled: config.requestLog.enabled,
    bodies: config.requestLog.bodies,
    retentionDays: config.requestLog.retentionDays,
    maxHeldPerAccount: config.eventsMaxHeldPerAccount,
    watchIntervalMs: config.eventsWatchIntervalMs,
    afterCommit: (listener) => database.afterCommitOf('request_logs', listener),
    thread: config.requestLogWriter === 'event-loop' ? undefined : { location: database.reach, committed: () => database.committedElsewhere('request_logs') },
    tracer: config.tracer,
    warn: (message) => log(message, {}),
    clock,
  });
  const metrics = createMetricsModule({
    database,
    limitCounts: limits.provides.counts,
    requestLogCounts: requestLog.provides.counts,
    backlog: { outbox: outbox.provides.consumers },
    clock,
  });
  const identity = createIdentityModule({
    db,
    environment: config.env,
    authCacheTtlMs: config.authCacheTtlMs,
    loginTokenKeys: keys.keys('login-tokens'),
    publicUrl: config.publicUrl,
    loginTokenTtlSeconds: config.loginTokenTtlSeconds,
    passwordCost: config.passwordCost,
    outbox: outbox.provides.outbox,
    bruteForce,
    broadcast,
    browserSessions: {
      idleMs: config.dashboard.sessionIdleMinutes * 60_000,
      maxMs: config.dashboard.sessionMaxHours * 3_600_000,
      stepUpAfterMs: STEP_UP_AFTER_MS,
    },
    clock,
  });
  const catalogue = createCatalogueModule({
    db,
    outbox: outbox.provides.outbox,
    publicUrl: config.publicUrl,
    cursors,
    lowStockThresholdKg: config.lowStockThresholdKg,
    imageDir: path.join(config.dataDir, 'images'),
    imageConcurrency: config.imageConcurrency,
    imageQueue: config.imageQueue,
    broadcast,
    clock,
  });
  const health = createHealthModule({ database, version: API_VERSION, environment: config.env, clock });
  const customers = createCustomersModule({
    db,
    bruteForce,
    accounts: identity.provides.accounts,
    directory: identity.provides.directory,
    cheeses: catalogue.provides.cheeses,
    outbox: outbox.provides.outbox,
    clock,
  });
  const oauth = createOAuthModule({
    db,
    environment: config.env,
    authCacheTtlMs: config.authCacheTtlMs,
    consentKeys: keys.keys('oauth-consent'),
    csrfKeys: keys.keys('page-csrf'),
    publicUrl: config.publicUrl,
    clients: identity.provides.oauthClients,
    clientDirectory: identity.provides.clientDirectory,
    logins: identity.provides.logins,
    accounts: identity.provides.accounts,
    directory: identity.provides.directory,
    refreshReuseIntervalSeconds: config.oauthRefreshReuseIntervalSeconds,
    log,
    bruteForce,
    sessions: identity.provides.browserSessions,
    sessionCookie: config.dashboard.cookieName,
    revocations: identity.provides.revocations,
    clock,
  });
  const orders = createOrdersModule({
    db,
    environment: config.env,
    outbox: outbox.provides.outbox,
    stock: catalogue.provides.stock,
    cheeses: catalogue.provides.cheeses,
    delays: config.orderDelays,
    cursors,
    accounts: identity.provides.directory,
    tiers: customers.provides.customers,
    preferences: customers.provides.preferences,
    customers: customers.provides.customers,
    clock,
  });
  const webhooks = createWebhooksModule({
    db,
    tracer: config.tracer,
    environment: config.env,
    outbox: outbox.provides.outbox,
    accounts: identity.provides.directory,
    outboxConsumers: outbox.provides.consumers,
    outboxRows: outbox.provides.rows,
    secretKeys: keys.keys('webhook-secrets'),
    cursors,
    settings: config.webhooks,
    afterOutboxCommit: (listener) => database.afterCommitOf('outbox', listener),
    log,
    onAttempt: metrics.provides.webhookAttempted,
    clock,
  });
  // The second phase: ports of modules built before the ones that offer them. The catalogue
  // asks orders before a cheese goes and customers before an account closes, while orders
  // need both; limits ask identity for plans, while identity takes their brute-force guard;
  // metrics read webhooks' backlog, while webhooks count their attempts in metrics.
  catalogue.wire({ cheeseDeletion: orders.provides.cheeseDeletion });
  customers.wire({ accountDeletion: orders.provides.accountDeletion });
  limits.wire({ planOf: (accountId) => identity.provides.accounts.planOf(accountId) });
  metrics.wire({ deliveries: webhooks.provides.deliveryBacklog });
  // Nothing an OAuth grant created outlives it: the webhooks its tokens made go in the transaction that ends it.
  oauth.provides.onGrantsEnded(webhooks.provides.grantsEnded);
  // The outbox keeps every row a kept delivery points at (its prune never names their table).
  outbox.provides.retainWith(webhooks.provides.outboxRetainer);
  const events = createEventsModule({
    log: outbox.provides.log,
    deliveries: webhooks.provides.deliveryStatus,
    cursors,
    environment: config.env,
    retentionDays: outbox.provides.retentionDays,
    maxHeldPerAccount: config.eventsMaxHeldPerAccount,
    watchIntervalMs: config.eventsWatchIntervalMs,
    afterOutboxCommit: (listener) => database.afterCommitOf('outbox', listener),
    warn: (message) => log(message, {}),
    clock,
  });
  const dashboard = createDashboardModule({
    db,
    environment: config.env,
    csrfKeys: keys.keys('page-csrf'),
    revealKeys: keys.keys('dashboard-reveals'),
    publicUrl: config.publicUrl,
    cookieName: config.dashboard.cookieName,
    sessions: identity.provides.browserSessions,
    apiKeys: identity.provides.apiKeys,
    accounts: identity.provides.accounts,
    usage: (accountId, plan) => limits.provides.limiter.usage({ accountId, plan }),
    webhooks: webhooks.provides.webhooks,
    events: events.provides.events,
    eventDeliveries: webhooks.provides.eventDeliveries,
    requestLogs: requestLog.provides.logs,
    orders: orders.provides.orders,
    deliveryInsights: webhooks.provides.insights,
    orderableCheeses: async () => (await catalogue.provides.cheeses.profiles(db)).filter((cheese) => cheese.orderable).map(({ id, name, pricePerKg }) => ({ id, name, pricePerKg })),
    oauthClients: identity.provides.oauthClients,
    grants: oauth.provides.grants,
    clock,
  });
  return { limits, idempotency: createIdempotencyModule({ db, ttlMs: config.idempotencyTtlSeconds * 1000, leaseMs: config.idempotencyLeaseMs, log, clock }), outbox, health, identity, catalogue, customers, oauth, orders, webhooks, events, requestLog, dashboard, metrics };
}

export function jobsOf(modules: Modules): Job[] {
  return Object.values(modules).flatMap((module) => module.jobs);
}

export function workersOf(modules: Modules): Worker[] {
  return Object.values(modules).flatMap((module: { workers?: Worker[] }) => module.workers ?? []);
}

/** Every credential format the service accepts: API keys, login tokens, OAuth access tokens. */
export function credentialResolversOf(modules: Modules): CredentialResolver[] {
  return [...modules.identity.provides.credentialResolvers, modules.oauth.provides.credentialResolver];
}
