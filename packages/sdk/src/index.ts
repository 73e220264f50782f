export { Fromagerie, SDK_VERSION, type FromagerieOptions, type ApiClient, type ApiPaths } from './client.js';
export { FromagerieError, FromagerieConnectionError, type ErrorType, type FieldError } from './errors.js';
export { WebhookVerificationError, verifyWebhook, type DeliveryHeaders } from './verify.js';
export type { Event, EventListQuery, EventTypeFilter, TailOptions } from './events.js';
export type { RequestLogEntry, RequestLogListQuery, RequestLogTailOptions } from './request-logs.js';
export type { CallOptions, CreateOptions } from './resources.js';
export type * from './types.js';
export type { paths, components, operations, webhooks } from './generated/openapi.js';
