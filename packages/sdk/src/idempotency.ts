import { randomUUID } from 'node:crypto';
import type { Middleware } from 'openapi-fetch';
import type { IdempotentPost } from './types.js';

const CREATING_POSTS = [
  '/api-keys', '/api-keys/{id}/roll', '/oauth-clients', '/cheeses', '/cheeses/bulk', '/customer',
  '/customer/{username}/addresses', '/store/order', '/orders', '/webhooks',
] as const satisfies readonly IdempotentPost[];

// Fails to compile when the OpenAPI document gains an operation that honours the key and this list does not name it.
type Unlisted = Exclude<IdempotentPost, (typeof CREATING_POSTS)[number]>;
const everyOperationListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyOperationListed;

const creating: ReadonlySet<string> = new Set(CREATING_POSTS);

/** Gives a creating POST one `Idempotency-Key` (unless the caller chose one), before the retrying fetch sees it, so every attempt carries the same. */
export const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (request.method === 'POST' && creating.has(schemaPath) && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', randomUUID());
    }
    return request;
  },
};
