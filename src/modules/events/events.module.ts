import type { CheeseEnv } from '../../kernel/environment.js';
import type { FeatureModule } from '../../kernel/module.js';
import type { CursorCodec } from '../../kernel/pagination.js';
import type { OutboxLog } from '../outbox/outbox.module.js';
import { eventRoutes } from './event.routes.js';
import { EventService } from './event.service.js';
import type { DeliveryStatusPort } from './events.ports.js';
import { type Clock } from '../../kernel/clock.js';

export type { DeliveryStatusPort } from './events.ports.js';

export interface EventsOptions {
  /** The outbox's log reader: the log is the outbox itself, never a copy. */
  log: OutboxLog;
  /** How each event's webhook deliveries stand (webhooks implements it). */
  deliveries: DeliveryStatusPort;
  cursors: CursorCodec;
  environment: CheeseEnv;
  /** EVENT_RETENTION_DAYS: an id older than this that is gone answers 410. */
  retentionDays: number;
  clock?: Clock;
}

export type EventsModule = FeatureModule<{ events: EventService }>;

/** The event log, GET /v2/events (issue 21): no tables of its own. */
export function createEventsModule(options: EventsOptions): EventsModule {
  const events = new EventService(options);
  return {
    name: 'events',
    routes: async (app) => {
      await app.register(eventRoutes, { events });
    },
    jobs: [],
    provides: { events },
  };
}
