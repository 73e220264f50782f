import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { WebhookEvent } from './types.js';

/** A delivery whose signature or timestamp does not check out: answer it 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

export type DeliveryHeaders = Headers | Record<string, string | string[] | undefined>;

/** Standard Webhooks' tolerance, which its library applies: a delivery signed more than 5 minutes from now is refused. */
const TOLERANCE_SECONDS = 5 * 60;

function headerReader(headers: DeliveryHeaders): (name: string) => string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return (name) => headers.get(name) ?? undefined;
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) lower.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
  }
  return (name) => lower.get(name);
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Checks a delivery against the webhook's secret (or both secrets during a rotation) and
 * returns its event, typed by `type`. The Standard Webhooks signature decides when it is
 * there (it covers the id and the timestamp, so a replayed delivery is refused); the
 * `X-Cheese-Signature` (body only) is used only without it, and then the unsigned
 * `webhook-timestamp` must still be within 5 minutes. Pass the body exactly as received.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: DeliveryHeaders, secret: string | readonly string[]): WebhookEvent {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => !s.startsWith('whsec_'))) throw new TypeError('verify: give the webhook secret(s), `whsec_…`');
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
  const header = headerReader(headers);
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const standard = header('webhook-signature');
  if (standard !== undefined) {
    let lastError: unknown;
    for (const candidate of secrets) {
      try {
        new StandardWebhook(candidate).verify(body, { 'webhook-id': id ?? '', 'webhook-timestamp': timestamp ?? '', 'webhook-signature': standard });
        return JSON.parse(body) as WebhookEvent;
      } catch (error) {
        lastError = error;
      }
    }
    throw new WebhookVerificationError(`webhook-signature does not verify: ${lastError instanceof Error ? lastError.message : 'no secret matches'}`);
  }
  const cheese = header('x-cheese-signature');
  if (cheese === undefined) throw new WebhookVerificationError('no signature: neither webhook-signature nor X-Cheese-Signature is present');
  const seconds = timestamp !== undefined && /^\d+$/.test(timestamp) ? Number(timestamp) : NaN;
  if (!(Math.abs(Date.now() / 1000 - seconds) <= TOLERANCE_SECONDS)) throw new WebhookVerificationError('webhook-timestamp is missing or more than 5 minutes from now');
  const given = cheese.split(',').map((value) => value.trim());
  const matches = secrets.some((candidate) => {
    const expected = `sha256=${createHmac('sha256', candidate).update(body).digest('hex')}`;
    return given.some((value) => sameText(value, expected));
  });
  if (!matches) throw new WebhookVerificationError('X-Cheese-Signature does not verify');
  return JSON.parse(body) as WebhookEvent;
}
