import type { components, operations, paths, webhooks } from './generated/openapi.js';

type Schemas = components['schemas'];
export type Cheese = Schemas['Cheese'];
export type Order = Schemas['Order'];
export type Customer = Schemas['Customer'];
export type Address = Schemas['Address'];
export type Webhook = Schemas['Webhook'];
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type ApiKey = Schemas['ApiKey'];
export type ApiError = Schemas['Error'];

/** A page of a list: `nextCursor` is null on the last one. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** A page of a log (events, requests): `nextAfter` is where polling forward goes on (`after`). */
export interface LogPage<T> extends Page<T> {
  nextAfter: string | null;
}

type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body of an operation's request, by operationId. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends { requestBody?: infer R } ? JsonBody<NonNullable<R>> : never;
/** The JSON body of an operation's first 2xx answer, by operationId. */
export type ResponseBody<Op extends keyof operations, Status extends number = 200 | 201> = operations[Op] extends { responses: infer R }
  ? { [S in keyof R]: S extends Status ? JsonBody<R[S]> : never }[keyof R]
  : never;
/** The query parameters of an operation, by operationId. */
export type Query<Op extends keyof operations> = operations[Op] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The envelope of one event kind, as it is delivered (the `webhooks` section of the OpenAPI document). */
export type WebhookEventOf<K extends keyof webhooks> = webhooks[K] extends { post: { requestBody: infer R } } ? JsonBody<R> : never;
/** Every event a webhook may receive: a union that narrows on `type`. */
export type WebhookEvent = { [K in keyof webhooks]: WebhookEventOf<K> }[keyof webhooks];
export type EventType = WebhookEvent['type'];

/** POST operations that honour `Idempotency-Key`: the SDK gives each call one key, reused by its retries. */
export type IdempotentPost = {
  [P in keyof paths]: paths[P] extends { post: { parameters: { header?: infer H } } } ? ([NonNullable<H>] extends [never] ? never : 'Idempotency-Key' extends keyof NonNullable<H> ? P : never) : never;
}[keyof paths];
