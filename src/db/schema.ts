import {
  ACCOUNT_COLUMNS,
  API_KEY_COLUMNS,
  BROWSER_SESSION_COLUMNS,
  LOGIN_SESSION_COLUMNS,
  OAUTH_CLIENT_COLUMNS,
  type AccountTable,
  type ApiKeyTable,
  type BrowserSessionTable,
  type LoginSessionTable,
  type OAuthClientTable,
} from '../modules/identity/identity.table.js';
import {
  CATEGORY_COLUMNS,
  CHEESE_COLUMNS,
  CHEESE_IMAGE_COLUMNS,
  CHEESE_TAG_COLUMNS,
  TAG_COLUMNS,
  type CategoryTable,
  type CheeseImageTable,
  type CheeseTable,
  type CheeseTagTable,
  type TagTable,
} from '../modules/catalogue/catalogue.table.js';
import { OUTBOX_COLUMNS, OUTBOX_CONSUMER_COLUMNS, type OutboxConsumerTable, type OutboxTable } from '../modules/outbox/outbox.table.js';
import {
  CUSTOMER_ADDRESS_COLUMNS,
  CUSTOMER_PROFILE_COLUMNS,
  type CustomerAddressTable,
  type CustomerProfileTable,
} from '../modules/customers/customer.table.js';
import { OAUTH_GRANT_COLUMNS, OAUTH_TOKEN_COLUMNS, type OAuthGrantTable, type OAuthTokenTable } from '../modules/oauth/oauth.table.js';
import { ORDER_COLUMNS, ORDER_ITEM_COLUMNS, ORDER_STATUS_CHANGE_COLUMNS, type OrderItemTable, type OrderStatusChangeTable, type OrderTable } from '../modules/orders/order.table.js';
import { SUBSCRIPTION_COLUMNS, type SubscriptionTable } from '../modules/orders/subscription.table.js';
import { IDEMPOTENCY_KEY_COLUMNS, type IdempotencyKeyTable } from '../modules/idempotency/idempotency.table.js';
import { DEPLOYMENT_COLUMNS, type DeploymentTable } from './deployment.table.js';
import {
  WEBHOOK_ATTEMPT_COLUMNS,
  WEBHOOK_COLUMNS,
  WEBHOOK_DELIVERY_COLUMNS,
  type WebhookAttemptTable,
  type WebhookDeliveryTable,
  type WebhookTable,
} from '../modules/webhooks/webhook.table.js';
import { DASHBOARD_REVEAL_COLUMNS, type DashboardRevealTable } from '../modules/dashboard/dashboard.table.js';
import { REQUEST_LOG_COLUMNS, type RequestLogTable } from '../modules/request-log/request-log.table.js';
import type { ColumnsOf } from './table-columns.js';

export interface DB {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  login_sessions: LoginSessionTable;
  browser_sessions: BrowserSessionTable;
  oauth_clients: OAuthClientTable;
  oauth_grants: OAuthGrantTable;
  oauth_tokens: OAuthTokenTable;
  categories: CategoryTable;
  tags: TagTable;
  cheeses: CheeseTable;
  cheese_tags: CheeseTagTable;
  cheese_images: CheeseImageTable;
  outbox: OutboxTable;
  outbox_consumers: OutboxConsumerTable;
  customer_profiles: CustomerProfileTable;
  customer_addresses: CustomerAddressTable;
  orders: OrderTable;
  order_items: OrderItemTable;
  order_status_changes: OrderStatusChangeTable;
  subscriptions: SubscriptionTable;
  idempotency_keys: IdempotencyKeyTable;
  webhooks: WebhookTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  dashboard_reveals: DashboardRevealTable;
  request_logs: RequestLogTable;
  deployment: DeploymentTable;
}

/**
 * Every table of DB with its columns, for test/platform/schema-drift.test.ts to compare with the
 * migrated database. Typed by DB, so a table added there without its columns here (or given
 * another table's) does not compile.
 */
export const TABLES: { readonly [Table in keyof DB]: ColumnsOf<DB[Table]> } = {
  accounts: ACCOUNT_COLUMNS,
  api_keys: API_KEY_COLUMNS,
  login_sessions: LOGIN_SESSION_COLUMNS,
  browser_sessions: BROWSER_SESSION_COLUMNS,
  oauth_clients: OAUTH_CLIENT_COLUMNS,
  oauth_grants: OAUTH_GRANT_COLUMNS,
  oauth_tokens: OAUTH_TOKEN_COLUMNS,
  categories: CATEGORY_COLUMNS,
  tags: TAG_COLUMNS,
  cheeses: CHEESE_COLUMNS,
  cheese_tags: CHEESE_TAG_COLUMNS,
  cheese_images: CHEESE_IMAGE_COLUMNS,
  outbox: OUTBOX_COLUMNS,
  outbox_consumers: OUTBOX_CONSUMER_COLUMNS,
  customer_profiles: CUSTOMER_PROFILE_COLUMNS,
  customer_addresses: CUSTOMER_ADDRESS_COLUMNS,
  orders: ORDER_COLUMNS,
  order_items: ORDER_ITEM_COLUMNS,
  order_status_changes: ORDER_STATUS_CHANGE_COLUMNS,
  subscriptions: SUBSCRIPTION_COLUMNS,
  idempotency_keys: IDEMPOTENCY_KEY_COLUMNS,
  webhooks: WEBHOOK_COLUMNS,
  webhook_deliveries: WEBHOOK_DELIVERY_COLUMNS,
  webhook_attempts: WEBHOOK_ATTEMPT_COLUMNS,
  dashboard_reveals: DASHBOARD_REVEAL_COLUMNS,
  request_logs: REQUEST_LOG_COLUMNS,
  deployment: DEPLOYMENT_COLUMNS,
};
