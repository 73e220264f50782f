import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { FeatureModule, Job } from '../../kernel/module.js';
import { Outbox } from './outbox.writer.js';
import { OutboxConsumerRepository } from './outbox-consumer.repository.js';
import { OutboxLogRepository } from './outbox-log.repository.js';
import { OutboxRowRepository } from './outbox-row.repository.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export { Outbox, EVENT_TYPES, eventIdTime, type EventType, type NewEvent } from './outbox.writer.js';
export { EVENT_DATA_SCHEMAS, EVENT_TRIGGERS, Metadata as EventMetadata } from './event-data.schema.js';
export { sampleEnvelope, sampleEnvelopes, SAMPLE_API_VERSION, SAMPLE_CREATED_AT, type SampleEnvelope, type SampleOptions } from './event-samples.js';
export { envelopeOf, eventJson, type EnvelopeFields } from './outbox.envelope.js';
export { requiredScope } from './event-access.rules.js';
export { envelopeId, envelopeSchemas, kindName } from './event-envelope.schema.js';
export type { ConsumedEvent, OutboxConsumerRepository as OutboxConsumers } from './outbox-consumer.repository.js';
export type { LogQuery, OutboxLogRepository as OutboxLog } from './outbox-log.repository.js';
export type { EventSelection, OutboxRowRepository as OutboxRows } from './outbox-row.repository.js';
export type { LogPosition, OutboxRecord } from './outbox-position.js';

/**
 * A consumer whose own records point at outbox rows (webhooks: its deliveries): the lowest
 * outbox id it still needs, or null when none. Pruning keeps that row and every later one.
 */
export interface OutboxRetainer {
  lowestRetainedOutboxId(): Promise<number | null>;
}

export interface OutboxOptions {
  db: Kysely<DB>;
  environment: CheeseEnv;
  apiVersion: string;
  /** EVENT_RETENTION_DAYS: rows older than this go once every consumer is done with them. */
  retentionDays: number;
  clock?: Clock;
}

export interface OutboxProvides {
  /** The writer: the only way to record an event. */
  outbox: Outbox;
  /** Consumers (the webhook fan-out) read forward from their own position; how far one is behind (the metrics). */
  consumers: OutboxConsumerRepository;
  /** The event log's reads. */
  log: OutboxLogRepository;
  /** Rows by id, and selections of rows as subqueries, for the modules whose records point at them (webhooks). */
  rows: OutboxRowRepository;
  /** Registers a consumer's hold on rows it still points at (the composition root does). */
  retainWith(retainer: OutboxRetainer): void;
  retentionDays: number;
  clock?: Clock;
}

export type OutboxModule = FeatureModule<OutboxProvides>;

const HOUR_MS = 3_600_000;

/** The transactional outbox and the log it is (issue 21): it alone writes, reads and prunes its table. */
export function createOutboxModule(options: OutboxOptions): OutboxModule {
  const consumers = new OutboxConsumerRepository(options.db, options.environment, options.clock);
  const clock = options.clock ?? systemClock;
  const retainers: OutboxRetainer[] = [];
  const prune: Job = {
    name: 'outbox.prune',
    everyMs: HOUR_MS,
    async run(now = clock.date()) {
      const held = await Promise.all(retainers.map((retainer) => retainer.lowestRetainedOutboxId()));
      const ids = held.filter((id): id is number => id !== null);
      const before = new Date(now.getTime() - options.retentionDays * 24 * HOUR_MS).toISOString();
      return consumers.prune(before, ids.length === 0 ? null : Math.min(...ids));
    },
  };
  return {
    name: 'outbox',
    jobs: [prune],
    provides: {
      outbox: new Outbox({ environment: options.environment, apiVersion: options.apiVersion, clock }),
      consumers,
      log: new OutboxLogRepository(options.db),
      rows: new OutboxRowRepository(options.db, options.environment),
      retainWith: (retainer) => void retainers.push(retainer),
      retentionDays: options.retentionDays,
    },
  };
}
