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
 * replay, so the attempt log rebuilds it from the outbox row instead of storing it.
 */
export function envelopeOf(event: EnvelopeFields): string {
  return `{"id":${JSON.stringify(event.eventId)},"type":${JSON.stringify(event.eventType)},"created_at":${JSON.stringify(event.createdAt)},"data":${event.data},"metadata":${event.metadata}}`;
}
