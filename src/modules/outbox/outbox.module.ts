import type { CheeseEnv } from '../../kernel/environment.js';
import type { FeatureModule } from '../../kernel/module.js';
import { Outbox } from './outbox.writer.js';

export { Outbox, EVENT_TYPES, type EventType, type NewEvent } from './outbox.writer.js';
export { EVENT_DATA_SCHEMAS, EVENT_TRIGGERS, Metadata as EventMetadata } from './event-data.schema.js';
export { sampleEnvelope, sampleEnvelopes, SAMPLE_API_VERSION, SAMPLE_CREATED_AT, type SampleEnvelope, type SampleOptions } from './event-samples.js';

export type OutboxModule = FeatureModule<{ outbox: Outbox }>;

/** The transactional outbox: other modules record events through `provides.outbox`, inside their own transactions. */
export function createOutboxModule(options: { environment: CheeseEnv; apiVersion: string }): OutboxModule {
  return { name: 'outbox', jobs: [], provides: { outbox: new Outbox(options) } };
}
