// The envelope is the outbox's (issue 21: one serializer for webhooks and the event log).
export { envelopeOf, type EnvelopeFields } from '../outbox/outbox.module.js';
