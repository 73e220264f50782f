import { envelopeId, EVENT_TRIGGERS, EVENT_TYPES } from '../outbox/outbox.module.js';

const header = (name: string, description: string, example: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string' }, example });

const SIGNATURE_HEADERS = [
  header('X-Cheese-Signature', '`sha256=` and the hex HMAC-SHA256 of the raw body, keyed by the whole `whsec_…` secret. During a rotation\'s 24 h, two values, comma-separated: accept either.', 'sha256=5d41402abc4b2a76b9719d911017c592ae1f0a6c2c1d4bd0f5b1a3e7c9f8e2d1'),
  header('webhook-id', 'Standard Webhooks: the event id (the same as the body\'s `id`); dedupe on it, delivery is at least once.', 'evt_7f3a9c1e2b4d4f6a8c0e1f2a3b4c5d6e'),
  header('webhook-timestamp', 'Standard Webhooks: seconds since the epoch when this attempt was signed; refuse old ones to stop replays.', '1781259300'),
  header('webhook-signature', 'Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the base64-decoded part after `whsec_`; two space-separated during a rotation.', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='),
  header('X-Cheese-Event-Id', 'The event id again, for receivers that do not read Standard Webhooks headers.', 'evt_7f3a9c1e2b4d4f6a8c0e1f2a3b4c5d6e'),
  header('X-Cheese-Event-Type', 'The event kind (the body\'s `type`).', 'order.shipped'),
  header('X-Cheese-Delivery-Attempt', 'This delivery\'s attempt number, from 1.', '1'),
];

const RESPONSES = {
  '2XX': { description: 'Received. Any 2xx within `WEBHOOK_TIMEOUT_MS` (10 s) ends the delivery. The body means nothing to the delivery: at most 64 KB is read, and its first 4 KB (of any answer) kept in the attempt log for you to read (GET /webhooks/{id}/deliveries/{attemptId}).' },
  '410': { description: 'Gone: the webhook is disabled (`active: false`, `disabledReason` says when) and its pending events are dead-lettered. PATCH it with `{"active": true}` to resume.' },
  '429': { description: 'Too many: retried at the next scheduled attempt, or later if `Retry-After` asks (never past the schedule\'s last attempt). The same for 503.' },
  default: { description: 'Anything else (3xx included: redirects are not followed), or no answer in time: retried at 1 min, 5 min, 30 min, 2 h and 12 h after the event, then dead-lettered (POST /webhooks/{id}/replay sends it again).' },
};

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event kind, the request our dispatcher
 * sends to a registered URL, so generated clients and the docs page show receivers what to expect.
 */
export function webhookOpenApi(): Record<string, unknown> {
  const entries: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    entries[type] = {
      post: {
        operationId: `${type.replace(/[._](.)/g, (_m, c: string) => c.toUpperCase())}Event`,
        tags: ['webhooks'],
        summary: `The \`${type}\` event`,
        description: `${EVENT_TRIGGERS[type]} Sent to every active webhook subscribed to it whose account may read it (see POST /webhooks). Reference with examples: docs/events.md.`,
        parameters: SIGNATURE_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              // The kind's envelope, defined once (the outbox's) and shared with the event log's Event (issue 21).
              schema: { $ref: `#/components/schemas/${envelopeId(type)}`, unevaluatedProperties: false },
            },
          },
        },
        responses: RESPONSES,
      },
    };
  }
  // JSON round trip: plain data only (schema builders may carry non-enumerable or symbol keys).
  return JSON.parse(JSON.stringify(entries)) as Record<string, unknown>;
}
