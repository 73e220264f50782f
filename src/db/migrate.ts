import { Migrator, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import * as initial from './migrations/0001_initial.js';
import * as dropImageDeletedAt from './migrations/0002_drop_image_deleted_at.js';
import * as searchTokens from './migrations/0003_search_tokens.js';
import * as loginSessions from './migrations/0004_login_sessions.js';
import * as customers from './migrations/0005_customers.js';
import * as oauthClients from './migrations/0006_oauth_clients.js';
import * as oauthGrants from './migrations/0007_oauth_grants.js';
import * as orders from './migrations/0010_orders.js';
import * as subscriptions from './migrations/0011_subscriptions.js';
import * as accountPlans from './migrations/0012_account_plans.js';
import * as idempotencyKeys from './migrations/0013_idempotency_keys.js';
import * as webhooks from './migrations/0014_webhooks.js';
import * as idempotencyCreatedResource from './migrations/0015_idempotency_created_resource.js';
import * as idempotencyPrincipal from './migrations/0016_idempotency_principal.js';
import * as deployment from './migrations/0017_deployment.js';
import * as browserSessions from './migrations/0018_browser_sessions.js';
import * as apiKeyRoll from './migrations/0019_api_key_roll.js';
import * as webhookAttemptDetail from './migrations/0020_webhook_attempt_detail.js';
import * as eventLog from './migrations/0021_event_log.js';
import * as grantBoundResources from './migrations/0022_grant_bound_resources.js';
import * as dashboardReveals from './migrations/0023_dashboard_reveals.js';
import * as requestLog from './migrations/0024_request_log.js';
import * as requestLogTraceId from './migrations/0025_request_log_trace_id.js';

/** Listed statically so migrations work the same under tsx, tests and any bundler. */
export const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_drop_image_deleted_at': dropImageDeletedAt,
  '0003_search_tokens': searchTokens,
  '0004_login_sessions': loginSessions,
  '0005_customers': customers,
  '0006_oauth_clients': oauthClients,
  '0007_oauth_grants': oauthGrants,
  '0010_orders': orders,
  '0011_subscriptions': subscriptions,
  '0012_account_plans': accountPlans,
  '0013_idempotency_keys': idempotencyKeys,
  '0014_webhooks': webhooks,
  '0015_idempotency_created_resource': idempotencyCreatedResource,
  '0016_idempotency_principal': idempotencyPrincipal,
  '0017_deployment': deployment,
  '0018_browser_sessions': browserSessions,
  '0019_api_key_roll': apiKeyRoll,
  '0020_webhook_attempt_detail': webhookAttemptDetail,
  '0021_event_log': eventLog,
  '0022_grant_bound_resources': grantBoundResources,
  '0023_dashboard_reveals': dashboardReveals,
  '0024_request_log': requestLog,
  '0025_request_log_trace_id': requestLogTraceId,
};

/** `schema`: the PostgreSQL schema in use, so the migrator's own tables are looked up there. */
export async function migrateToLatest(db: Kysely<unknown>, schema?: string): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/**
 * The code's migrations the database has not run yet, in order (none: the schema is current).
 * Reads the migrator's own table only; a database never migrated has them all pending.
 */
export async function pendingMigrations(db: Kysely<unknown>, schema?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  const known = await migrator.getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
