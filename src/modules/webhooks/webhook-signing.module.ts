// The webhooks module's second, light entry: how a delivery's body is made and signed, with
// nothing that reaches the database or the network. The developer CLI (`fromagerie listen`,
// `events resend`) signs its local forwards with this very code, so what verifies a real
// delivery (the SDK's webhooks.verify, any Standard Webhooks library) verifies those too.
export { newWebhookSecret, signatureHeaders, type SignatureHeaders } from './webhook.secrets.js';
export { envelopeOf, type EnvelopeFields } from '../outbox/outbox-envelope.module.js';
