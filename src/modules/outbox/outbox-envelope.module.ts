// The outbox's second, light entry: the one serializer of an event and the catalogue of kinds,
// with nothing that reaches the database. What runs without one (the developer CLI's
// `listen`, which signs the envelopes it forwards exactly as webhooks are signed) imports this
// instead of outbox.module.ts, whose repositories load Kysely and the dialects.
export { envelopeOf, eventJson, type EnvelopeFields } from './outbox.envelope.js';
export { EVENT_TYPES, type EventType } from './event.types.js';
