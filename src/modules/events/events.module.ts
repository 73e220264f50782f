import type { CheeseEnv } from '../../kernel/environment.js';
import type { FeatureModule } from '../../kernel/module.js';
import type { CursorCodec } from '../../kernel/pagination.js';
import type { OutboxLog } from '../outbox/outbox.module.js';
import { eventRoutes } from './event.routes.js';
import { EventService } from './event.service.js';
import type { DeliveryStatusPort } from './events.ports.js';
import { HeadWatcher } from '../../kernel/head-watcher.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export type { DeliveryStatusPort } from './events.ports.js';
export type { EventService, EventFilters } from './event.service.js';

export interface EventsOptions {
  /** The outbox's log reader: the log is the outbox itself, never a copy. */
  log: OutboxLog;
  /** How each event's webhook deliveries stand (webhooks implements it). */
  deliveries: DeliveryStatusPort;
  cursors: CursorCodec;
  environment: CheeseEnv;
  /** EVENT_RETENTION_DAYS: an id older than this that is gone answers 410. */
  retentionDays: number;
  /** EVENTS_MAX_HELD_PER_ACCOUNT: long polls (`wait`) of one account held at once on this instance. */
  maxHeldPerAccount: number;
  /** How often the watcher reads the head while requests are held (WATCH_INTERVAL_MS by default). */
  watchIntervalMs?: number;
  /** Subscribes to commits that added outbox rows (the database's commit signal): wakes held requests at once. */
  afterOutboxCommit?: (listener: () => void) => () => void;
  warn?: (message: string) => void;
  clock?: Clock;
}

export type EventsModule = FeatureModule<{
  events: EventService;
  /** SIGTERM: every held long poll answers now (before the drain delay), none is held again. */
  drain: () => void;
}>;

/** The event log, GET /v2/events (issue 21): no tables of its own. */
export function createEventsModule(options: EventsOptions): EventsModule {
  const clock = options.clock ?? systemClock;
  let lastWarning = 0;
  const { log } = options;
  const watcher = new HeadWatcher({
    log: { head: () => log.head(), beyond: (from, limit) => log.settledBeyond(from, limit), positionOf: (row) => ({ txid: row.txid, id: row.outboxId }) },
    afterCommit: options.afterOutboxCommit,
    maxHeldPerAccount: options.maxHeldPerAccount,
    instead: 'Poll without wait, or end another held request.',
    intervalMs: options.watchIntervalMs,
    onError: (error) => {
      // At most one line a minute while the database fails: held requests end at their deadline meanwhile.
      if (clock.now() - lastWarning < 60_000) return;
      lastWarning = clock.now();
      options.warn?.(`event log watcher: ${error instanceof Error ? error.message : String(error)}`);
    },
  });
  const events = new EventService({ ...options, watcher });
  return {
    name: 'events',
    routes: async (app) => {
      // Held requests answer before the server waits for requests in flight to finish.
      app.addHook('preClose', async () => watcher.close());
      await app.register(eventRoutes, { events });
    },
    jobs: [],
    provides: { events, drain: () => watcher.close() },
  };
}
