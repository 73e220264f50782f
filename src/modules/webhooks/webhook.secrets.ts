import { createHmac, randomBytes } from 'node:crypto';
import type { Keys } from '../../kernel/key-ring.js';
import { SecretBox } from '../../kernel/secret-box.js';

/** `whsec_` and 32 random bytes in base64: the Standard Webhooks secret format. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Webhook secrets must be recoverable (we sign with them), so unlike passwords and keys they
 * are not hashed but encrypted (SecretBox): a copy of the database alone reveals none.
 */
export function webhookSecretBox(keys: Keys): SecretBox {
  return new SecretBox(keys);
}

export interface SignatureHeaders {
  'x-cheese-signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Both schemes of decisions.md §8, with every secret in force (newest first; two during a
 * rotation's overlap):
 * - `X-Cheese-Signature: sha256=<hex HMAC-SHA256 keyed by the whole secret string, over the raw body>`,
 *   comma-separated when there are two;
 * - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 keyed by the base64-decoded
 *   part after whsec_, over "{id}.{timestamp}.{body}">`, space-separated when there are two.
 */
export function signatureHeaders(secrets: readonly string[], eventId: string, body: string, timestampSeconds: number): SignatureHeaders {
  const signedContent = `${eventId}.${timestampSeconds}.${body}`;
  return {
    'x-cheese-signature': secrets.map((secret) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`).join(','),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets
      .map((secret) => `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(signedContent).digest('base64')}`)
      .join(' '),
  };
}
