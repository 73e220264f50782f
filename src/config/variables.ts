import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Type } from 'typebox';
import { ENVIRONMENTS, type CheeseEnv } from '../kernel/environment.js';
import { ENVIRONMENT_MULTIPLIERS } from '../modules/limits/limits.module.js';
import { defaultAccountConcurrency } from '../modules/webhooks/webhooks.module.js';
import { trustEntryProblem } from '../http/trusted-proxies.js';
import { numeric, optional, refuse, text, unset, variable, type Get } from './variable.js';
import { TRACING } from './tracing-variables.js';

/** Seconds, fractions allowed (`0.5`), or -1 for "off". */
const STEP_DELAY = '^(?:-1|[0-9]{1,7}(?:\\.[0-9]{1,3})?)$';
const POSITIVE = '^[1-9][0-9]{0,8}$';

// Declared apart: other variables' defaults and rules read them.
const PORT = variable('PORT', {
  ...numeric('^[0-9]{1,5}$'),
  default: '8080',
  doc: 'HTTP port',
  check: (port) => (port < 1 || port > 65535 ? 'PORT must be 1..65535' : undefined),
});
const HOST = variable('HOST', { ...text(), default: '127.0.0.1', doc: 'Interface to bind; `0.0.0.0` in a container' });
const DATA_DIR = variable('DATA_DIR', { ...text(), parse: (raw) => path.resolve(raw), default: './data', doc: 'SQLite file, uploaded images, and (outside production) the generated app secret' });
const CHEESE_ENV = variable('CHEESE_ENV', { schema: Type.Enum([...ENVIRONMENTS]), parse: (raw) => raw as CheeseEnv, default: 'development', doc: '`development`, `sandbox` or `production`; decides `sk_test_` vs `sk_live_` keys' });
const REQUEST_TIMEOUT_MS = variable('REQUEST_TIMEOUT_MS', { ...numeric('^[1-9][0-9]{2,6}$'), default: '60000', doc: 'A whole request, headers and body, must arrive within this (408 and closed otherwise; slow uploads need it). 100 to 9999999' });
const WEBHOOK_CONCURRENCY = variable('WEBHOOK_CONCURRENCY', { ...numeric('^[1-9][0-9]{0,3}$'), default: '64', doc: 'Attempts in flight at once on one instance' });
const PUBLIC_URL = variable('PUBLIC_URL', {
  ...text(Type.String({ pattern: '^https?://[^/]+$' })),
  default: (get) => defaultPublicUrl(get(HOST), get(PORT)),
  defaultText: '`http://$HOST:$PORT` (`localhost` when bound to `0.0.0.0`)',
  doc: 'The origin clients reach the service at: in image URLs, links and the banner. Put the proxy\'s URL here behind one',
});
const inProduction = (get: Get) => get(CHEESE_ENV) === 'production';
const APP_SECRET = variable('APP_SECRET', {
  ...text(Type.String({ minLength: 32 })),
  default: (get) => localSecret(get(DATA_DIR)),
  defaultText: 'generated into `DATA_DIR/.app-secret`',
  doc: '32+ characters; keys pagination cursors, login tokens and the OAuth sign-in forms, and encrypts the stored webhook secrets (which another secret cannot read); **required** in production, and the same on every instance',
  required: (get) => (inProduction(get) ? 'APP_SECRET (32+ characters) must be set when CHEESE_ENV=production' : undefined),
});

/**
 * Every environment variable, placed where its value goes in AppConfig, in the README's order
 * (the README table is made from this: `npm run config-docs`).
 */
export const SETTINGS = {
  port: PORT,
  host: HOST,
  publicUrl: PUBLIC_URL,
  corsOrigins: variable('CORS_ORIGINS', {
    schema: Type.String({ pattern: '^\\s*https?://[^/,\\s]+(\\s*,\\s*https?://[^/,\\s]+)*\\s*$' }),
    parse: (raw) => raw.split(',').map((origin) => origin.trim()).filter(Boolean),
    default: () => [],
    defaultText: 'none',
    doc: 'Other browser origins allowed to call the API, comma-separated (`https://shop.example,https://pos.example`); `PUBLIC_URL`\'s origin always is',
  }),
  dataDir: DATA_DIR,
  databaseUrl: variable('DATABASE_URL', { ...text(Type.String({ pattern: '^postgres(ql)?://' })), default: unset, defaultText: 'unset (SQLite)', doc: '`postgres://user@host:port/db` selects PostgreSQL' }),
  databaseSchema: variable('DATABASE_SCHEMA', { ...text(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })), default: unset, defaultText: 'unset', doc: 'PostgreSQL schema to use (default: the connection\'s search_path)' }),
  poolSize: optional(
    variable('DATABASE_POOL_SIZE', {
      ...numeric('^[1-9][0-9]{0,2}$'),
      default: '10',
      doc: 'PostgreSQL connections per instance (1 to 999). Instances × this must stay under the server\'s `max_connections` minus a margin (docs/scaling.md); more connections let more order commits share one WAL flush (docs/performance.md)',
    }),
  ),
  preparedStatements: optional(
    variable('DATABASE_PREPARED_STATEMENTS', {
      schema: Type.Enum(['on', 'off']),
      parse: (raw) => raw !== 'off',
      default: 'on',
      doc: 'PostgreSQL: each parameterised query is a named prepared statement per connection, parsed and planned once (order placement: half the database CPU). `off` behind a pooler in transaction mode that cannot keep them (PgBouncer before 1.21, or without `max_prepared_statements`)',
    }),
  ),
  env: CHEESE_ENV,
  adminUsername: variable('ADMIN_USERNAME', { ...text(Type.String({ pattern: '^[A-Za-z0-9_.-]{3,64}$' })), default: 'admin', doc: 'The first staff account, created at first start' }),
  adminPassword: variable('ADMIN_PASSWORD', {
    ...text(Type.String({ minLength: 12, maxLength: 256 })),
    default: unset,
    defaultText: 'generated and printed once',
    doc: 'Its password when the first start creates it (12+ characters, 4+ different ones, not containing the username: the rule of `admin reset-password`); **required** in production',
    required: (get) => (inProduction(get) ? 'ADMIN_PASSWORD must be set when CHEESE_ENV=production' : undefined),
  }),
  appSecret: APP_SECRET,
  appSecretPrevious: optional(
    variable('APP_SECRET_PREVIOUS', {
      ...text(Type.String({ minLength: 32 })),
      default: unset,
      defaultText: 'unset',
      doc: 'During a rotation of `APP_SECRET` only: the secret it replaces (32+ characters, not `APP_SECRET` itself). What was made under it (cursors, login tokens, sign-in forms, stored webhook secrets) is still accepted; everything new is made with `APP_SECRET`. Run `fromagerie secrets re-encrypt`, then remove it (docs/operations.md, "Rotating APP_SECRET")',
      check: (previous, get) => (previous !== undefined && previous === get(APP_SECRET) ? 'APP_SECRET_PREVIOUS must be the secret APP_SECRET replaces, not APP_SECRET itself' : undefined),
    }),
  ),
  loginTokenTtlSeconds: variable('LOGIN_TOKEN_TTL_S', { ...numeric('^[1-9][0-9]{0,6}$'), default: '28800', doc: 'Lifetime in seconds of a login token from `POST /v2/customer/login` (8 hours)' }),
  oauthRefreshReuseIntervalSeconds: variable('OAUTH_REFRESH_REUSE_INTERVAL_S', { ...numeric('^(?:[0-9]|[1-5][0-9]|60)$'), default: '2', doc: 'Seconds after an OAuth refresh token is rotated during which presenting it again (a concurrent refresh, a retry) is only refused with `invalid_grant`; after them it is taken for a replay and revokes the whole grant. 0 to 60; `0`: no grace' }),
  authCacheTtlMs: variable('AUTH_CACHE_TTL_MS', { ...numeric('^[0-9]{1,6}$'), default: '5000', doc: 'How long a resolved API key or login token is trusted without a database lookup; a revocation applies at once on the instance that made it and within this time on the others. `0` disables' }),
  lowStockThresholdKg: variable('LOW_STOCK_THRESHOLD_KG', { ...numeric('^[0-9]+(\\.[0-9]+)?$'), default: '5', doc: 'Below this, `cheese.low_stock` fires (once per crossing)' }),
  bodyLimitBytes: variable('BODY_LIMIT_BYTES', { ...numeric('^[0-9]{3,9}$'), default: '1048576', doc: 'Largest JSON body accepted (413 above); image uploads have their own 10 MB limit' }),
  readCacheTtlMs: variable('READ_CACHE_TTL_MS', { ...numeric('^[0-9]{1,6}$'), default: '2000', doc: 'How long a catalogue GET response may be served from memory. Every catalogue write clears it on its instance; other instances may serve a response this old. `0` disables' }),
  readCacheMaxBytes: variable('READ_CACHE_MAX_BYTES', { ...numeric('^[0-9]{1,10}$'), default: '33554432', doc: 'Memory budget of that cache (32 MiB), least recently used answers evicted first' }),
  imageConcurrency: variable('IMAGE_CONCURRENCY', { ...numeric('^[1-9][0-9]?$'), default: '2', doc: 'Image uploads decoded at once. Each takes about 7 bytes a pixel at its peak (some 280 MB for a 40-megapixel image, the largest accepted): this sets the memory uploads can take' }),
  imageQueue: variable('IMAGE_QUEUE', { ...numeric('^[0-9]{1,3}$'), default: '4', doc: 'Uploads allowed to wait for a turn; beyond, 503 with `Retry-After` before the body is read' }),
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  headersTimeoutMs: variable('HEADERS_TIMEOUT_MS', {
    ...numeric('^[1-9][0-9]{2,6}$'),
    default: (get) => Math.min(10_000, get(REQUEST_TIMEOUT_MS)),
    defaultText: '`10000` (or `REQUEST_TIMEOUT_MS` if shorter)',
    doc: 'The request headers must arrive within this (408 and closed otherwise); at most `REQUEST_TIMEOUT_MS`',
    check: (headers, get) =>
      headers > get(REQUEST_TIMEOUT_MS) ? `HEADERS_TIMEOUT_MS (${headers}) must not exceed REQUEST_TIMEOUT_MS (${get(REQUEST_TIMEOUT_MS)}), which bounds the headers too` : undefined,
  }),
  maxConnectionsPerClient: variable('MAX_CONNECTIONS_PER_CLIENT', { ...numeric('^[0-9]{1,6}$'), default: '100', doc: 'Open connections per client (an IPv4 address, or an IPv6 /64); the next one gets 503 with `Retry-After: 1` and is closed, its request never run. `0`: no cap. Connections from `TRUST_PROXY` peers are not counted (the proxy carries many clients and keeps this cap itself: deploy/haproxy.cfg)' }),
  idempotencyTtlSeconds: variable('IDEMPOTENCY_TTL_S', { ...numeric(POSITIVE), default: '86400', doc: 'How long an `Idempotency-Key` is remembered (24 h): the same key and request within it replays the first answer' }),
  idempotencyLeaseMs: optional(
    variable('IDEMPOTENCY_LEASE_MS', {
      ...numeric('^[1-9][0-9]{3,5}$'),
      default: '10000',
      doc: 'While a request with an `Idempotency-Key` runs, its key is locked (a retry gets 409) for this long, renewed every third of it by the instance running it; an instance that dies leaves its keys locked for at most this long (on SQLite its restart frees them at once), and one that shuts down releases them. Measured on PostgreSQL\'s clock. 1000 to 999999',
    }),
  ),
  rateLimits: {
    enabled: variable('RATE_LIMITS', { schema: Type.Enum(['on', 'off']), parse: (raw) => raw !== 'off', default: 'on', doc: '`off` turns rate limiting off entirely (no limits, no `RateLimit` fields): for load tests and trusted networks only. On by default in every environment' }),
    free: {
      perHour: variable('RATE_LIMIT_FREE_PER_HOUR', { ...numeric(POSITIVE), default: '100', doc: 'Requests an hour on the Free plan: new customers and anonymous callers (per address). This and the figures below are production\'s: see `RATE_LIMIT_MULTIPLIER`' }),
      burst: variable('RATE_LIMIT_FREE_BURST', { ...numeric(POSITIVE), default: '10', doc: 'Requests at once on the Free plan (the size of its bucket)' }),
    },
    pro: {
      perHour: variable('RATE_LIMIT_PRO_PER_HOUR', { ...numeric(POSITIVE), default: '10000', doc: 'Requests an hour on the Pro plan' }),
      burst: variable('RATE_LIMIT_PRO_BURST', { ...numeric(POSITIVE), default: '100', doc: 'Requests at once on the Pro plan' }),
    },
    enterprise: {
      perSecond: variable('RATE_LIMIT_ENTERPRISE_PER_SECOND', { ...numeric(POSITIVE), default: '1000', doc: 'Requests a second on the Enterprise plan (staff): no hourly quota' }),
      burst: variable('RATE_LIMIT_ENTERPRISE_BURST', { ...numeric(POSITIVE), default: '1000', doc: 'Requests at once on the Enterprise plan' }),
    },
    perMinute: variable('RATE_LIMIT_PER_MINUTE', { ...numeric(POSITIVE), default: '1000', doc: 'Ceiling per minute for authenticated callers on Free and Pro' }),
    multiplier: optional(
      variable('RATE_LIMIT_MULTIPLIER', {
        ...numeric('^[1-9][0-9]{0,3}$'),
        default: (get) => ENVIRONMENT_MULTIPLIERS[get(CHEESE_ENV)],
        defaultText: `\`${ENVIRONMENT_MULTIPLIERS.development}\` in development, \`${ENVIRONMENT_MULTIPLIERS.sandbox}\` in sandbox, \`${ENVIRONMENT_MULTIPLIERS.production}\` in production`,
        doc: 'Every rate limit figure above (the anonymous bucket per address too) and the brute-force limits on sign-up, login and `/oauth/token` are multiplied by this, so that local development (`npm start`) and sandbox test runs are not held back while every answer still carries the `RateLimit` fields; `1` in development tries the production figures. Only `1` in production',
        check: (multiplier, get) => (inProduction(get) && multiplier !== 1 ? `RATE_LIMIT_MULTIPLIER must be 1 in production (the product's figures; the plans' have their own variables), not ${multiplier}` : undefined),
      }),
    ),
  },
  redisUrl: variable('REDIS_URL', { ...text(Type.String({ pattern: '^rediss?://' })), default: unset, defaultText: 'unset', doc: '`redis://host:port` (or `rediss://`): rate-limit buckets live in Redis, so several instances share one budget. Unset: each instance counts in its own memory. If Redis stops answering, each instance counts on its own (logged at most every 30 s) and goes back to Redis when it answers; calls to Redis time out after 250 ms' }),
  redisKeyPrefix: variable('REDIS_KEY_PREFIX', { ...text(Type.String({ pattern: '^[A-Za-z0-9:_-]{1,64}$' })), default: 'fromagerie:', doc: 'Prefix of the keys in Redis (to share one Redis between deployments)' }),
  orderDelays: {
    captureS: variable('PAYMENT_CAPTURE_DELAY_S', { ...numeric(STEP_DELAY), default: '5', doc: 'Seconds after placement before the (simulated) payment is captured and the order becomes `approved`; fractions allowed; `-1` leaves it to staff (`PATCH /orders/{id}`) or the sandbox advance' }),
    shipS: variable('SHIP_DELAY_S', { ...numeric(STEP_DELAY), default: '60', doc: 'Seconds after approval before the (simulated) courier ships the order, with a carrier and tracking number; `-1` leaves it to staff' }),
    deliverS: variable('DELIVER_DELAY_S', { ...numeric(STEP_DELAY), default: '300', doc: 'Seconds after shipping before delivery is confirmed; `-1` leaves it to staff' }),
  },
  webhooks: {
    retryScheduleS: variable('WEBHOOK_RETRY_SCHEDULE_S', {
      schema: Type.String({ pattern: '^\\s*[0-9]{1,7}(\\.[0-9]{1,3})?(\\s*,\\s*[0-9]{1,7}(\\.[0-9]{1,3})?){0,19}\\s*$' }),
      parse: parseSchedule,
      default: '0,60,300,1800,7200,43200',
      doc: 'Delay in seconds of each webhook attempt after the event, comma-separated, non-decreasing, fractions allowed: attempt n waits for the n-th figure. A webhook\'s `maxAttempts` (5 or 6) takes the first 5 or 6; after the last failure the event is dead-lettered',
    }),
    timeoutMs: variable('WEBHOOK_TIMEOUT_MS', { ...numeric('^[1-9][0-9]{1,5}$'), default: '10000', doc: 'A receiver must answer within this (connecting included), or the attempt fails' }),
    retentionDays: variable('WEBHOOK_RETENTION_DAYS', { ...numeric('^[1-9][0-9]{0,3}$'), default: '30', doc: 'How long the attempt log and settled deliveries are kept before the hourly prune. An event stays in the event log while any delivery of it is kept (see `EVENT_RETENTION_DAYS`)' }),
    concurrency: WEBHOOK_CONCURRENCY,
    endpointConcurrency: variable('WEBHOOK_ENDPOINT_CONCURRENCY', { ...numeric('^[1-9][0-9]{0,2}$'), default: '8', doc: 'Attempts in flight at once to one webhook on one instance, so a slow receiver never holds up the others' }),
    accountConcurrency: variable('WEBHOOK_ACCOUNT_CONCURRENCY', {
      ...numeric('^[1-9][0-9]{0,3}$'),
      default: (get) => defaultAccountConcurrency(get(WEBHOOK_CONCURRENCY)),
      defaultText: '`16` (a quarter of `WEBHOOK_CONCURRENCY`)',
      doc: 'Attempts in flight at once for all of one account\'s webhooks on one instance, so one account\'s slow or hanging receivers never hold up the others; free slots go to accounts round-robin. At most `WEBHOOK_CONCURRENCY` (refused above it). One account never has more in flight than this: raise it for a single tenant with many fast receivers',
      check: (account, get) =>
        account > get(WEBHOOK_CONCURRENCY)
          ? `WEBHOOK_ACCOUNT_CONCURRENCY (${account}) must not exceed WEBHOOK_CONCURRENCY (${get(WEBHOOK_CONCURRENCY)}): it is one account's share of those slots`
          : undefined,
    }),
    pollMs: variable('WEBHOOK_POLL_MS', { ...numeric('^[1-9][0-9]{1,6}$'), default: '1000', doc: 'The dispatcher\'s safety-net poll. It is woken at once by every commit of an event (on PostgreSQL, any instance\'s, by LISTEN/NOTIFY) and when a retry falls due' }),
  },
  eventRetentionDays: optional(
    variable('EVENT_RETENTION_DAYS', {
      ...numeric('^[1-9][0-9]{0,3}$'),
      default: '30',
      doc: 'How long the event log (`GET /v2/events`) keeps an event: the hourly prune deletes events older than this once the webhook fan-out has passed them and no kept delivery points at them. An id older than this answers 410 Gone. 1 to 9999',
    }),
  ),
  eventsMaxHeldPerAccount: variable('EVENTS_MAX_HELD_PER_ACCOUNT', {
    ...numeric('^[1-9][0-9]{0,4}$'),
    default: '100',
    doc: 'Long polls of the event log (`GET /v2/events?wait=`) one account may hold at once on one instance; one more is a 429. 1 to 99999',
  }),
  requestLog: {
    enabled: variable('REQUEST_LOG', {
      schema: Type.Enum(['on', 'off']),
      parse: (raw) => raw !== 'off',
      default: 'on',
      doc: 'The request log (`GET /v2/request-logs`): every /v2 request an account makes, recorded through a bounded queue written in batches. `off` records nothing (for measuring its cost)',
    }),
    bodies: variable('REQUEST_LOG_BODIES', {
      schema: Type.Enum(['all', 'errors', 'none']),
      parse: (raw) => raw as 'all' | 'errors' | 'none',
      default: (get) => (inProduction(get) ? 'errors' : 'all'),
      defaultText: '`errors` when `CHEESE_ENV=production`, `all` otherwise',
      doc: 'Which requests keep their request and answer bodies in the request log (the first 16 KB of each, secrets redacted): `all`, `errors` (4xx and 5xx only) or `none`',
    }),
    retentionDays: variable('REQUEST_LOG_RETENTION_DAYS', {
      ...numeric('^[1-9][0-9]{0,3}$'),
      default: '7',
      doc: 'How long the request log keeps an entry: an hourly job deletes older ones. 1 to 9999',
    }),
  },
  dashboard: {
    sessionIdleMinutes: variable('DASHBOARD_SESSION_IDLE_MIN', { ...numeric('^[1-9][0-9]{0,4}$'), default: '120', doc: 'A dashboard sign-in unused for this many minutes ends (2 hours)' }),
    sessionMaxHours: variable('DASHBOARD_SESSION_MAX_H', { ...numeric('^[1-9][0-9]{0,3}$'), default: '12', doc: 'A dashboard sign-in ends this many hours after it began, used or not' }),
    cookieName: variable('DASHBOARD_COOKIE_NAME', {
      ...text(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
      default: (get) => (get(PUBLIC_URL).startsWith('https:') ? '__Host-fromagerie_session' : 'fromagerie_session'),
      defaultText: '`__Host-fromagerie_session` when `PUBLIC_URL` is https, `fromagerie_session` otherwise',
      doc: 'Name of the dashboard\'s session cookie. The cookie is Secure when `PUBLIC_URL` is https; a `__Host-` name needs https (a browser drops it over plain http)',
      check: (name, get) => (/^__(Host|Secure)-/.test(name) && !get(PUBLIC_URL).startsWith('https:') ? `DASHBOARD_COOKIE_NAME ${name} needs PUBLIC_URL on https: browsers refuse a ${name.split('-')[0]}- cookie over plain http` : undefined),
    }),
  },
  role: variable('ROLE', {
    schema: Type.Enum(['api', 'worker', 'all']),
    parse: (raw) => raw as 'api' | 'worker' | 'all',
    default: 'all',
    doc: 'What this instance runs. `all`: the HTTP API and the background work (order lifecycle, webhook dispatcher, prunes), as one process does. `api`: HTTP only, no jobs nor dispatcher. `worker`: the jobs and the webhook dispatcher, and on `PORT` only `/v2/health/live` and `/v2/health/ready` (404 for anything else), for the orchestrator\'s probes. Run at least one `all` or `worker` instance, or orders stop moving and webhooks stop going out',
  }),
  migrateOnBoot: variable('MIGRATE_ON_BOOT', {
    schema: Type.Enum(['true', 'false']),
    parse: (raw) => raw === 'true',
    default: 'true',
    doc: '`true`: the server applies pending migrations as it starts (instances starting at once on one PostgreSQL database take turns: migrations and first-start setup run once). `false`: it refuses to start while the schema is behind, naming `fromagerie migrate` (a one-shot migration step before a rolling deployment)',
  }),
  drainDelayMs: variable('DRAIN_DELAY_MS', {
    ...numeric('^[0-9]{1,6}$'),
    default: (get) => (inProduction(get) ? 5000 : 0),
    defaultText: '`0` outside production, `5000` in production',
    doc: 'On SIGTERM, how long the instance keeps serving with `/v2/health/ready` answering 503 before it stops taking connections, so the load balancer notices first: longer than its check interval × fall count (HAProxy `inter 1s fall 2`: 2 s, plus a margin). Then jobs stop claiming, requests in flight finish, pools close, exit 0',
  }),
  metricsPort: optional(
    variable('METRICS_PORT', {
      ...numeric('^[0-9]{1,5}$'),
      default: '9464',
      doc: 'Port of `GET /metrics` (Prometheus text format, docs/metrics.md), a server apart from `PORT`: the public port never serves it, and it has no authentication, so keep it off the internet. `0` turns it off. If the port is taken, the instance logs an error and serves without it',
      check: (port) => (port > 65535 ? 'METRICS_PORT must be 0..65535' : undefined),
    }),
  ),
  metricsHost: optional(variable('METRICS_HOST', { ...text(), default: '127.0.0.1', doc: 'Interface `/metrics` binds to: loopback by default, so only this machine can scrape it; `0.0.0.0` (or a private interface\'s address) when Prometheus runs elsewhere, behind a firewall' })),
  heapGrowingPercent: variable('HEAP_GROWING_PERCENT', {
    ...numeric('^[0-9]{1,3}$'),
    default: '50',
    doc: 'How far V8 lets the JavaScript heap grow past what survived the last full collection before it collects again, in percent (V8\'s `--heap-growing-percent`, set as the server starts). Under load V8\'s own rule lets the heap reach about four times the live data: 3,000 distinct catalogue pages grew the process by 170 to 177 MB on PostgreSQL, 63 to 73 MB with `50` (docs/performance.md, "Memory: distinct list URLs"). `0` leaves V8\'s own rule, for a little less collection work where memory is plentiful',
  }),
  trustProxy: variable('TRUST_PROXY', {
    ...text(Type.String({ minLength: 1, maxLength: 4000 })),
    parse: parseTrustProxy,
    default: 'false',
    doc: 'Which peers are proxies whose `X-Forwarded-For` names the client (for per-address rate limits, the logs): a comma-separated list of addresses and CIDRs (`172.28.0.0/24,127.0.0.1`, IPv6 too; also `loopback`, `linklocal`, `uniquelocal`). The client is the rightmost entry not added by one of them. `true` means loopback and private ranges only (`loopback,linklocal,uniquelocal`), never a public peer; `false` ignores the header. Connections from these peers are not under `MAX_CONNECTIONS_PER_CLIENT` (the proxy caps its clients: deploy/haproxy.cfg)',
  }),
  tracing: TRACING,
  logLevel: variable('LOG_LEVEL', { ...text(Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])), default: 'info', doc: 'pino level: `fatal` … `trace`, or `silent`' }),
  /**
   * The developer CLI's (`fromagerie listen`, `trigger`, `events resend`): read by it alone, from
   * its own environment (src/cli/dev/connection.ts: it loads no server configuration); declared
   * here so the README table and .env.example name them. The server ignores them.
   */
  cliApiBase: optional(
    variable('FROMAGERIE_API_BASE', { ...text(Type.String({ pattern: '^https?://' })), default: 'http://127.0.0.1:8080/v2', doc: 'CLI only: the API the developer commands (`listen`, `trigger`, `events resend`) call; `--api-base` overrides it' }),
  ),
  cliApiKey: optional(
    variable('FROMAGERIE_API_KEY', { ...text(), default: unset, defaultText: 'unset', doc: 'CLI only: the API key (`sk_test_…`) the developer commands call with; `--api-key` overrides it. Never read by the server' }),
  ),
};

/** `0,60,300`: the offsets must not go backwards (attempt n is never due before attempt n-1). */
function parseSchedule(raw: string): number[] {
  const delays = raw.split(',').map((part) => Number(part.trim()));
  refuse(delays.some((delay, i) => i > 0 && delay < delays[i - 1]!) ? `WEBHOOK_RETRY_SCHEDULE_S must not decrease (${raw})` : undefined);
  return delays;
}

/** `true`, `false`, or addresses and CIDRs, each checked here so a typo stops the start naming itself. */
function parseTrustProxy(raw: string): boolean | string[] {
  if (raw === 'true' || raw === 'false') return raw === 'true';
  const entries = raw.split(',').map((entry) => entry.trim());
  const problems = entries.map((entry) => (entry === '' ? 'an empty entry (two commas, or one at an end)' : trustEntryProblem(entry))).filter((problem) => problem !== undefined);
  refuse(problems.length > 0 ? `TRUST_PROXY: ${problems.join('; ')}` : undefined);
  return entries;
}

/** The origin the server is reached at when nothing says otherwise: the bound address (localhost when bound to all). */
function defaultPublicUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** Outside production a secret is made once and kept in DATA_DIR, so cursors, tokens and webhook secrets survive restarts. */
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
