import type { FastifyPluginAsync } from 'fastify';
import { EVENT_DATA_SCHEMAS, EVENT_TRIGGERS, EVENT_TYPES, sampleEnvelopes, type EventType } from '../outbox/outbox.module.js';
import { layoutOf, type DashboardContext } from './dashboard.context.js';

interface Described {
  title?: string;
  description?: string;
  anyOf?: Described[];
}

/** What the page shows of one kind: the same schema, trigger and samples docs/events.md is generated from. */
function eventKind(type: EventType, context: DashboardContext) {
  const schema = EVENT_DATA_SCHEMAS[type] as Described;
  return {
    type,
    anchor: `event-${type.replace(/[._]/g, '-')}`,
    trigger: EVENT_TRIGGERS[type],
    description: schema.description ?? '',
    variants: (schema.anyOf ?? []).map((variant) => ({ title: variant.title ?? 'Variant', description: variant.description ?? '' })),
    samples: sampleEnvelopes(type, { environment: context.environment }).map((envelope) => JSON.stringify(envelope, null, 2)),
  };
}

/** The events page (issue 19, page 6): every event kind, its trigger, description and a sample envelope. */
export function eventRoutes(context: DashboardContext): FastifyPluginAsync {
  // The schemas are fixed for the life of the process: built once.
  const kinds = EVENT_TYPES.map((type) => eventKind(type, context));
  return async (scope) => {
    scope.get('/events', async (request, reply) => reply.view('events', { ...layoutOf(context, request, reply, 'Events', 'events'), kinds }));
  };
}
