import type { ApiClient } from './api.js';
import { paginate, unwrap } from './call.js';
import type { CallOptions, CreateOptions } from './resources.js';
import type { CreatedWebhook, Page, Query, RequestBody, ResponseBody, Webhook, WebhookEvent } from './types.js';
import { verifyWebhook, type DeliveryHeaders } from './verify.js';

export class Webhooks {
  constructor(private readonly api: ApiClient) {}

  list(query: Query<'listWebhooks'> = {}, options?: CallOptions): Promise<Page<Webhook>> {
    return unwrap(this.api.GET('/webhooks', { params: { query }, signal: options?.signal }));
  }

  listAll(query: Omit<Query<'listWebhooks'>, 'cursor'> = {}, options?: CallOptions): AsyncGenerator<Webhook, void, undefined> {
    return paginate((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) }, options));
  }

  get(id: number, options?: CallOptions): Promise<Webhook> {
    return unwrap(this.api.GET('/webhooks/{id}', { params: { path: { id } }, signal: options?.signal }));
  }

  /** Registers a webhook: `secret` is in this answer only; keep it to verify deliveries. */
  create(body: RequestBody<'createWebhook'>, options?: CreateOptions): Promise<CreatedWebhook> {
    const header = options?.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {};
    return unwrap(this.api.POST('/webhooks', { body, params: { header }, signal: options?.signal }));
  }

  update(id: number, body: RequestBody<'updateWebhook'>, options?: CallOptions): Promise<Webhook> {
    return unwrap(this.api.PATCH('/webhooks/{id}', { params: { path: { id } }, body, signal: options?.signal }));
  }

  async delete(id: number, options?: CallOptions): Promise<void> {
    await unwrap(this.api.DELETE('/webhooks/{id}', { params: { path: { id } }, signal: options?.signal }));
  }

  deliveries(id: number, query: Query<'listWebhookDeliveries'> = {}, options?: CallOptions): Promise<ResponseBody<'listWebhookDeliveries'>> {
    return unwrap(this.api.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query }, signal: options?.signal }));
  }

  test(id: number, options?: CallOptions): Promise<ResponseBody<'testWebhook'>> {
    return unwrap(this.api.POST('/webhooks/{id}/test', { params: { path: { id } }, signal: options?.signal }));
  }

  /** Sends events again: the dead-lettered ones, those of a time range (`from`, `to`), or the ones named (`eventIds`). */
  replay(id: number, query: Query<'replayWebhook'> = {}, options?: CallOptions): Promise<ResponseBody<'replayWebhook'>> {
    return unwrap(this.api.POST('/webhooks/{id}/replay', { params: { path: { id }, query }, signal: options?.signal }));
  }

  rotateSecret(id: number, options?: CallOptions): Promise<ResponseBody<'rotateWebhookSecret'>> {
    return unwrap(this.api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id } }, signal: options?.signal }));
  }

  /** Checks a delivery's signature and returns its event (see verifyWebhook); throws WebhookVerificationError. */
  verify(rawBody: string | Uint8Array, headers: DeliveryHeaders, secret: string | readonly string[]): WebhookEvent {
    return verifyWebhook(rawBody, headers, secret);
  }
}
