import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';

export const ENVIRONMENTS = ['development', 'sandbox', 'production'] as const;
export type CheeseEnv = (typeof ENVIRONMENTS)[number];

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
  /** How long a resolved API key is trusted without a lookup (0 = never). */
  authCacheTtlMs: number;
  /** How long a catalogue GET response may be served from memory (0 = never). */
  readCacheTtlMs: number;
}

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
  READ_CACHE_TTL_MS: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
  TRUST_PROXY: Type.Optional(Type.Enum(['true', 'false'])),
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
    publicUrl: env.PUBLIC_URL ?? `http://localhost:${port}`,
    lowStockThresholdKg: Number(env.LOW_STOCK_THRESHOLD_KG ?? 5),
    bodyLimitBytes: Number(env.BODY_LIMIT_BYTES ?? 1_048_576),
    trustProxy: env.TRUST_PROXY === 'true',
    appSecret: env.APP_SECRET ?? localSecret(dataDir),
    authCacheTtlMs: Number(env.AUTH_CACHE_TTL_MS ?? 5000),
    readCacheTtlMs: Number(env.READ_CACHE_TTL_MS ?? 2000),
  };
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
