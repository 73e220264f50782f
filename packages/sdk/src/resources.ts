import type { ApiClient } from './api.js';
import { paginate, unwrap } from './call.js';
import type { ApiKey, Cheese, Customer, Order, Page, Query, RequestBody, ResponseBody } from './types.js';

/** Per-call options: a signal to cancel, and for creating calls your own Idempotency-Key (one is made otherwise). */
export interface CallOptions {
  signal?: AbortSignal;
}
export interface CreateOptions extends CallOptions {
  idempotencyKey?: string;
}

function keyHeader(options: CreateOptions | undefined): { 'Idempotency-Key'?: string } {
  return options?.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {};
}

export class Cheeses {
  constructor(private readonly api: ApiClient) {}

  list(query: Query<'listCheeses'> = {}, options?: CallOptions): Promise<ResponseBody<'listCheeses'>> {
    // The operation also answers text/csv (Accept: text/csv); the SDK asks for JSON, the default.
    return unwrap(this.api.GET('/cheeses', { params: { query }, signal: options?.signal })) as Promise<ResponseBody<'listCheeses'>>;
  }

  listAll(query: Omit<Query<'listCheeses'>, 'cursor'> = {}, options?: CallOptions): AsyncGenerator<ResponseBody<'listCheeses'>['items'][number], void, undefined> {
    return paginate((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) }, options));
  }

  get(idOrSlug: string | number, options?: CallOptions): Promise<Cheese> {
    return unwrap(this.api.GET('/cheeses/{cheeseId}', { params: { path: { cheeseId: String(idOrSlug) } }, signal: options?.signal }));
  }

  create(body: RequestBody<'createCheese'>, options?: CreateOptions): Promise<Cheese> {
    return unwrap(this.api.POST('/cheeses', { body, params: { header: keyHeader(options) }, signal: options?.signal }));
  }
}

export class Orders {
  constructor(private readonly api: ApiClient) {}

  list(query: Query<'listOrders'> = {}, options?: CallOptions): Promise<Page<Order>> {
    return unwrap(this.api.GET('/orders', { params: { query }, signal: options?.signal }));
  }

  listAll(query: Omit<Query<'listOrders'>, 'cursor'> = {}, options?: CallOptions): AsyncGenerator<Order, void, undefined> {
    return paginate((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) }, options));
  }

  get(id: number, options?: CallOptions): Promise<Order> {
    return unwrap(this.api.GET('/orders/{id}', { params: { path: { id } }, signal: options?.signal }));
  }

  /** Places an order (Form B): reserves stock and authorises payment. Retried safely with one Idempotency-Key. */
  create(body: RequestBody<'createOrder'>, options?: CreateOptions): Promise<Order> {
    return unwrap(this.api.POST('/orders', { body, params: { header: keyHeader(options) }, signal: options?.signal }));
  }

  /** Changes an order's status (cancel it, or staff moving it along). */
  update(id: number, body: RequestBody<'updateOrder'>, options?: CallOptions): Promise<Order> {
    return unwrap(this.api.PATCH('/orders/{id}', { params: { path: { id } }, body, signal: options?.signal }));
  }
}

export class Customers {
  constructor(private readonly api: ApiClient) {}

  /** Signs a customer up (public: the client's credential is sent but not needed). */
  create(body: RequestBody<'createCustomer'>, options?: CreateOptions): Promise<Customer> {
    return unwrap(this.api.POST('/customer', { body, params: { header: keyHeader(options) }, signal: options?.signal }));
  }

  get(username: string, options?: CallOptions): Promise<Customer> {
    return unwrap(this.api.GET('/customer/{username}', { params: { path: { username } }, signal: options?.signal }));
  }

  update(username: string, body: RequestBody<'replaceCustomer'>, options?: CallOptions): Promise<ResponseBody<'replaceCustomer'>> {
    return unwrap(this.api.PUT('/customer/{username}', { params: { path: { username } }, body, signal: options?.signal }));
  }

  async delete(username: string, options?: CallOptions): Promise<void> {
    await unwrap(this.api.DELETE('/customer/{username}', { params: { path: { username } }, signal: options?.signal }));
  }
}

export class ApiKeys {
  constructor(private readonly api: ApiClient) {}

  /** The account's keys (at most a handful: not paginated). */
  list(options?: CallOptions): Promise<{ items: ApiKey[] }> {
    return unwrap(this.api.GET('/api-keys', { signal: options?.signal }));
  }

  /** A new key: `key` is in this answer only. */
  create(body: RequestBody<'createApiKey'>, options?: CreateOptions): Promise<ResponseBody<'createApiKey', 201>> {
    return unwrap(this.api.POST('/api-keys', { body, params: { header: keyHeader(options) }, signal: options?.signal }));
  }

  /** A new key replacing this one, which keeps working for `oldKeyExpiresInSeconds` (default 24 hours). */
  roll(id: number, body: RequestBody<'rollApiKey'> = {}, options?: CreateOptions): Promise<ResponseBody<'rollApiKey', 201>> {
    return unwrap(this.api.POST('/api-keys/{id}/roll', { params: { path: { id }, header: keyHeader(options) }, body, signal: options?.signal }));
  }

  async revoke(id: number, options?: CallOptions): Promise<void> {
    await unwrap(this.api.DELETE('/api-keys/{id}', { params: { path: { id } }, signal: options?.signal }));
  }
}
