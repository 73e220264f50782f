/** What an event's envelope is built from: the outbox row's fields, as stored (data and metadata are JSON text). */
export interface EnvelopeFields {
  eventId: string;
  eventType: string;
  createdAt: string;
  data: string;
  metadata: string;
}

/**
 * The body every attempt of an event sends, byte for byte: the same on every attempt and
 * replay, so the attempt log rebuilds it from the outbox row instead of storing it; and what
 * the event log (GET /v2/events) answers, with `pending_webhooks` after it (eventJson).
 */
export function envelopeOf(event: EnvelopeFields): string {
  return `{"id":${JSON.stringify(event.eventId)},"type":${JSON.stringify(event.eventType)},"created_at":${JSON.stringify(event.createdAt)},"data":${event.data},"metadata":${event.metadata}}`;
}

/** The envelope as the event log answers it: the same bytes, then `pending_webhooks`. */
export function eventJson(event: EnvelopeFields, pendingWebhooks: number): string {
  return `${envelopeOf(event).slice(0, -1)},"pending_webhooks":${pendingWebhooks}}`;
}
