import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import type { RateLimitSettings } from './modules/limits/limits.module.js';
import type { WebhookSettings } from './modules/webhooks/webhooks.module.js';
import { defaultAccountConcurrency } from './modules/webhooks/dispatch.rules.js';
import { Compile } from 'typebox/compile';

import { ENVIRONMENTS, type CheeseEnv } from './kernel/environment.js';

export { ENVIRONMENTS, type CheeseEnv };

/** Everything the app needs, already validated. Tests build one by hand. */
export interface AppConfig {
  env: CheeseEnv;
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… selects PostgreSQL; unset means SQLite in dataDir. */
  databaseUrl: string | undefined;
  /** PostgreSQL schema to use (tests isolate runs with it). */
  databaseSchema: string | undefined;
  adminUsername: string;
  adminPassword: string | undefined;
  logLevel: string;
  publicUrl: string;
  lowStockThresholdKg: number;
  bodyLimitBytes: number;
  trustProxy: boolean;
  /** Keys the HMAC of pagination cursors (and, later, token signatures). */
  appSecret: string;
  /** How long a resolved API key or login token is trusted without a lookup (0 = never). */
  authCacheTtlMs: number;
  /** Lifetime of a login token from POST /customer/login. */
  loginTokenTtlSeconds: number;
  /** How long after a rotation the rotated-out refresh token is taken for a concurrent request, not a replay (0 = never). */
  oauthRefreshReuseIntervalSeconds: number;
  /** How long a catalogue GET response may be served from memory (0 = never). */
  readCacheTtlMs: number;
  /** Browser origins other than PUBLIC_URL's allowed to call the API (CORS). */
  corsOrigins: string[];
  /** The read cache's memory budget. */
  readCacheMaxBytes: number;
  /** A whole request (headers and body) must arrive within this; 408 otherwise. */
  requestTimeoutMs: number;
  /** The headers must arrive within this. */
  headersTimeoutMs: number;
  /** Images decoded at once, and uploads waiting for a turn beyond them (503 past both). */
  imageConcurrency: number;
  imageQueue: number;
  /** Open connections allowed per client address (0 = no cap). */
  maxConnectionsPerClient: number;
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlSeconds: number;
  /** Rate limits (decisions.md §7); `enabled` false with RATE_LIMITS=off. */
  rateLimits: RateLimitSettings;
  /** Shared rate-limit buckets for several instances. */
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  /** Seconds before each automatic order step (payment capture, shipping, delivery); -1 leaves it to staff. */
  orderDelays: { captureS: number; shipS: number; deliverS: number };
  /** Webhook delivery (decisions.md §8). */
  webhooks: WebhookSettings;
}


/** Seconds, fractions allowed (`0.5`), or -1 for "off". */
const STEP_DELAY = '^(?:-1|[0-9]{1,7}(?:\\.[0-9]{1,3})?)$';

const POSITIVE = '^[1-9][0-9]{0,8}$';

const EnvSchema = Type.Object({
  CHEESE_ENV: Type.Optional(Type.Enum([...ENVIRONMENTS])),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  PORT: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_SCHEMA: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  ADMIN_USERNAME: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{3,64}$' })),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 12, maxLength: 256 })),
  LOG_LEVEL: Type.Optional(Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+$' })),
  LOW_STOCK_THRESHOLD_KG: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })),
  BODY_LIMIT_BYTES: Type.Optional(Type.String({ pattern: '^[0-9]{3,9}$' })),
  APP_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  AUTH_CACHE_TTL_MS: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
  LOGIN_TOKEN_TTL_S: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,6}$' })),
  OAUTH_REFRESH_REUSE_INTERVAL_S: Type.Optional(Type.String({ pattern: '^(?:[0-9]|[1-5][0-9]|60)$' })),
  READ_CACHE_TTL_MS: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
  TRUST_PROXY: Type.Optional(Type.Enum(['true', 'false'])),
  CORS_ORIGINS: Type.Optional(Type.String({ pattern: '^\\s*https?://[^/,\\s]+(\\s*,\\s*https?://[^/,\\s]+)*\\s*$' })),
  READ_CACHE_MAX_BYTES: Type.Optional(Type.String({ pattern: '^[0-9]{1,10}$' })),
  REQUEST_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{2,6}$' })),
  HEADERS_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{2,6}$' })),
  IMAGE_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]?$' })),
  IMAGE_QUEUE: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
  MAX_CONNECTIONS_PER_CLIENT: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
  RATE_LIMITS: Type.Optional(Type.Enum(['on', 'off'])),
  IDEMPOTENCY_TTL_S: Type.Optional(Type.String({ pattern: POSITIVE })),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  REDIS_KEY_PREFIX: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9:_-]{1,64}$' })),
  RATE_LIMIT_FREE_PER_HOUR: Type.Optional(Type.String({ pattern: POSITIVE })),
  RATE_LIMIT_FREE_BURST: Type.Optional(Type.String({ pattern: POSITIVE })),
  RATE_LIMIT_PRO_PER_HOUR: Type.Optional(Type.String({ pattern: POSITIVE })),
  RATE_LIMIT_PRO_BURST: Type.Optional(Type.String({ pattern: POSITIVE })),
  RATE_LIMIT_ENTERPRISE_PER_SECOND: Type.Optional(Type.String({ pattern: POSITIVE })),
  RATE_LIMIT_ENTERPRISE_BURST: Type.Optional(Type.String({ pattern: POSITIVE })),
  RATE_LIMIT_PER_MINUTE: Type.Optional(Type.String({ pattern: POSITIVE })),
  PAYMENT_CAPTURE_DELAY_S: Type.Optional(Type.String({ pattern: STEP_DELAY })),
  SHIP_DELAY_S: Type.Optional(Type.String({ pattern: STEP_DELAY })),
  DELIVER_DELAY_S: Type.Optional(Type.String({ pattern: STEP_DELAY })),
  WEBHOOK_RETRY_SCHEDULE_S: Type.Optional(Type.String({ pattern: '^\\s*[0-9]{1,7}(\\.[0-9]{1,3})?(\\s*,\\s*[0-9]{1,7}(\\.[0-9]{1,3})?){0,19}\\s*$' })),
  WEBHOOK_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{1,5}$' })),
  WEBHOOK_RETENTION_DAYS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$' })),
  WEBHOOK_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$' })),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
  WEBHOOK_ACCOUNT_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$' })),
  WEBHOOK_POLL_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{1,6}$' })),
});
type Env = Static<typeof EnvSchema>;
const envValidator = Compile(EnvSchema);

export class ConfigError extends Error {}

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const relevant = Object.fromEntries(
    Object.keys(EnvSchema.properties)
      .filter((key) => source[key] !== undefined && source[key] !== '')
      .map((key) => [key, source[key]]),
  );
  if (!envValidator.Check(relevant)) {
    const problems = [...envValidator.Errors(relevant)].map((e) => `${e.instancePath.slice(1) || 'env'}: ${e.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const env = relevant as Env;
  const cheeseEnv = env.CHEESE_ENV ?? 'development';
  const port = Number(env.PORT ?? 8080);
  if (port < 1 || port > 65535) throw new ConfigError('invalid configuration: PORT must be 1..65535');
  if (cheeseEnv === 'production' && !env.ADMIN_PASSWORD) {
    throw new ConfigError('invalid configuration: ADMIN_PASSWORD must be set when CHEESE_ENV=production');
  }
  if (cheeseEnv === 'production' && !env.APP_SECRET) {
    throw new ConfigError('invalid configuration: APP_SECRET (32+ characters) must be set when CHEESE_ENV=production');
  }
  const requestTimeoutMs = Number(env.REQUEST_TIMEOUT_MS ?? 60_000);
  const headersTimeoutMs = env.HEADERS_TIMEOUT_MS === undefined ? Math.min(10_000, requestTimeoutMs) : Number(env.HEADERS_TIMEOUT_MS);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`invalid configuration: HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs}), which bounds the headers too`);
  }
  const webhookConcurrency = Number(env.WEBHOOK_CONCURRENCY ?? 64);
  const accountConcurrency = env.WEBHOOK_ACCOUNT_CONCURRENCY === undefined ? defaultAccountConcurrency(webhookConcurrency) : Number(env.WEBHOOK_ACCOUNT_CONCURRENCY);
  if (accountConcurrency > webhookConcurrency) {
    throw new ConfigError(`invalid configuration: WEBHOOK_ACCOUNT_CONCURRENCY (${accountConcurrency}) must not exceed WEBHOOK_CONCURRENCY (${webhookConcurrency}): it is one account's share of those slots`);
  }
  const dataDir = path.resolve(env.DATA_DIR ?? './data');
  return {
    env: cheeseEnv,
    host: env.HOST ?? '127.0.0.1',
    port,
    dataDir,
    databaseUrl: env.DATABASE_URL,
    databaseSchema: env.DATABASE_SCHEMA,
    adminUsername: env.ADMIN_USERNAME ?? 'admin',
    adminPassword: env.ADMIN_PASSWORD,
    logLevel: env.LOG_LEVEL ?? 'info',
    publicUrl: env.PUBLIC_URL ?? defaultPublicUrl(env.HOST ?? '127.0.0.1', port),
    lowStockThresholdKg: Number(env.LOW_STOCK_THRESHOLD_KG ?? 5),
    bodyLimitBytes: Number(env.BODY_LIMIT_BYTES ?? 1_048_576),
    trustProxy: env.TRUST_PROXY === 'true',
    appSecret: env.APP_SECRET ?? localSecret(dataDir),
    authCacheTtlMs: Number(env.AUTH_CACHE_TTL_MS ?? 5000),
    loginTokenTtlSeconds: Number(env.LOGIN_TOKEN_TTL_S ?? 28_800),
    oauthRefreshReuseIntervalSeconds: Number(env.OAUTH_REFRESH_REUSE_INTERVAL_S ?? 2),
    readCacheTtlMs: Number(env.READ_CACHE_TTL_MS ?? 2000),
    corsOrigins: parseOrigins(env.CORS_ORIGINS),
    readCacheMaxBytes: Number(env.READ_CACHE_MAX_BYTES ?? 32 * 1024 * 1024),
    requestTimeoutMs,
    headersTimeoutMs,
    maxConnectionsPerClient: Number(env.MAX_CONNECTIONS_PER_CLIENT ?? 100),
    imageConcurrency: Number(env.IMAGE_CONCURRENCY ?? 2),
    imageQueue: Number(env.IMAGE_QUEUE ?? 4),
    idempotencyTtlSeconds: Number(env.IDEMPOTENCY_TTL_S ?? 86_400),
    rateLimits: {
      enabled: env.RATE_LIMITS !== 'off',
      free: { perHour: Number(env.RATE_LIMIT_FREE_PER_HOUR ?? 100), burst: Number(env.RATE_LIMIT_FREE_BURST ?? 10) },
      pro: { perHour: Number(env.RATE_LIMIT_PRO_PER_HOUR ?? 10_000), burst: Number(env.RATE_LIMIT_PRO_BURST ?? 100) },
      enterprise: { perSecond: Number(env.RATE_LIMIT_ENTERPRISE_PER_SECOND ?? 1000), burst: Number(env.RATE_LIMIT_ENTERPRISE_BURST ?? 1000) },
      perMinute: Number(env.RATE_LIMIT_PER_MINUTE ?? 1000),
    },
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'fromagerie:',
    orderDelays: {
      captureS: Number(env.PAYMENT_CAPTURE_DELAY_S ?? 5),
      shipS: Number(env.SHIP_DELAY_S ?? 60),
      deliverS: Number(env.DELIVER_DELAY_S ?? 300),
    },
    webhooks: {
      retryScheduleS: parseSchedule(env.WEBHOOK_RETRY_SCHEDULE_S ?? '0,60,300,1800,7200,43200'),
      timeoutMs: Number(env.WEBHOOK_TIMEOUT_MS ?? 10_000),
      retentionDays: Number(env.WEBHOOK_RETENTION_DAYS ?? 30),
      concurrency: webhookConcurrency,
      endpointConcurrency: Number(env.WEBHOOK_ENDPOINT_CONCURRENCY ?? 8),
      accountConcurrency,
      pollMs: Number(env.WEBHOOK_POLL_MS ?? 1000),
    },
  };
}

/** `0,60,300`: the offsets must not go backwards (attempt n is never due before attempt n-1). */
function parseSchedule(text: string): number[] {
  const delays = text.split(',').map((part) => Number(part.trim()));
  if (delays.some((delay, i) => i > 0 && delay < delays[i - 1]!)) {
    throw new ConfigError(`invalid configuration: WEBHOOK_RETRY_SCHEDULE_S must not decrease (${text})`);
  }
  return delays;
}

/** The origin the server is reached at when nothing says otherwise: the bound address (localhost when bound to all). */
function defaultPublicUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** Browser origins allowed to call the API (CORS): `https://shop.example` entries, comma-separated. */
function parseOrigins(text: string | undefined): string[] {
  return (text ?? '').split(',').map((o) => o.trim()).filter(Boolean);
}

/** Outside production a secret is made once and kept in DATA_DIR, so cursors survive restarts. */
function localSecret(dataDir: string): string {
  const file = path.join(dataDir, '.app-secret');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    fs.mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32).toString('base64url');
    fs.writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  }
}
