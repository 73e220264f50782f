import createClient from 'openapi-fetch';
import type { ApiClient, ApiPaths } from './api.js';
import { idempotencyKeys } from './idempotency.js';
import { retryingFetch, type FetchLike } from './transport.js';
import { ApiKeys, Cheeses, Customers, Orders } from './resources.js';
import { Webhooks } from './webhooks.js';
import { Events } from './events.js';
import { RequestLogs } from './request-logs.js';

/** Every operation of the OpenAPI document. */
export type { ApiClient, ApiPaths } from './api.js';

interface CommonOptions {
  /** The API's root, e.g. `https://api.example.com/v2`; an origin alone gets `/v2`. */
  baseUrl: string;
  /** Retries after the first attempt, for network errors, 408, 429 and 5xx (default 2). */
  maxRetries?: number;
  /** Each attempt's deadline, answer body included (default 30,000 ms). */
  timeoutMs?: number;
  /** Another fetch (a proxy agent, a test double); the default is the global one. */
  fetch?: FetchLike;
}

/** One credential: an API key (`sk_…`) or an OAuth access token (`oat_…`), sent as `Authorization: Bearer`. */
export type FromagerieOptions = CommonOptions & ({ apiKey: string; accessToken?: never } | { accessToken: string; apiKey?: never });

export const SDK_VERSION = '0.1.0';
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RETRIES = 2;

function apiRoot(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v2';
  return url.toString().replace(/\/+$/, '');
}

export class Fromagerie {
  /** The typed client over every operation of the OpenAPI document (openapi-fetch), with the same credential, retries and timeouts. */
  readonly raw: ApiClient;
  readonly cheeses: Cheeses;
  readonly orders: Orders;
  readonly customers: Customers;
  readonly webhooks: Webhooks;
  readonly events: Events;
  readonly requestLogs: RequestLogs;
  readonly apiKeys: ApiKeys;

  constructor(options: FromagerieOptions) {
    const credential = options.apiKey ?? options.accessToken;
    if ((options.apiKey === undefined) === (options.accessToken === undefined) || !credential) {
      throw new TypeError('Fromagerie: give exactly one of apiKey or accessToken');
    }
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('Fromagerie: maxRetries must be a whole number, 0 or more');
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new TypeError('Fromagerie: timeoutMs must be more than 0');
    const fetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.raw = createClient<ApiPaths>({
      baseUrl: apiRoot(options.baseUrl),
      // Bearer serves every operation that takes a key; X-API-Key is refused by Form A's OAuth operations.
      headers: { authorization: `Bearer ${credential}`, 'user-agent': `fromagerie-sdk/${SDK_VERSION}` },
      fetch: retryingFetch({ fetch, maxRetries, timeoutMs }),
      querySerializer: { array: { style: 'form', explode: true } },
    });
    this.raw.use(idempotencyKeys);
    this.cheeses = new Cheeses(this.raw);
    this.orders = new Orders(this.raw);
    this.customers = new Customers(this.raw);
    this.webhooks = new Webhooks(this.raw);
    this.events = new Events(this.raw);
    this.requestLogs = new RequestLogs(this.raw);
    this.apiKeys = new ApiKeys(this.raw);
  }
}
