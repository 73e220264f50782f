import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { freeTcpPort, type PrivatePostgres, type PrivateRedis } from '../helpers/private-services.js';
import { FaultProxy } from './fault-proxy.js';
import { readPostgres } from './final-read.js';
import { startHaproxy } from './haproxy.js';
import { Instance } from './instance.js';
import { killAndWait, outputOf, type Managed } from './processes.js';
import { WebhookSink } from './webhook-sink.js';

export const APP_SECRET = 'chaos-suite-secret-chaos-suite-secret-0123';
export const ADMIN_PASSWORD = 'chaos staff password 2026';

/**
 * What a test can trust HAProxy with: `127.0.0.1` once TRUST_PROXY takes addresses (issue 20),
 * `true` while it takes only booleans. Decided by the configuration loader itself.
 */
function trustProxyValue(): string {
  try {
    loadConfig({ TRUST_PROXY: '127.0.0.1', APP_SECRET, DATA_DIR: os.tmpdir(), LOG_LEVEL: 'silent' });
    return '127.0.0.1';
  } catch {
    return 'true';
  }
}

/**
 * The environment of every instance. Development (the sandbox is seeded, loopback webhooks are
 * allowed) with production's drain: DRAIN_DELAY_MS 2 s against HAProxy's 1 s to notice. The
 * order lifecycle and webhook retries are fast so that a 20 s load sees orders approved,
 * shipped and delivered, and events retried and dead-lettered.
 */
export function instanceEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    CHEESE_ENV: 'development',
    APP_SECRET,
    ADMIN_PASSWORD,
    TRUST_PROXY: trustProxyValue(),
    DRAIN_DELAY_MS: '2000',
    LOG_LEVEL: 'warn',
    RATE_LIMITS: 'on',
    // Every connection comes from HAProxy's address: the per-client cap would count them all as one client.
    MAX_CONNECTIONS_PER_CLIENT: '0',
    PAYMENT_CAPTURE_DELAY_S: '1',
    SHIP_DELAY_S: '2',
    DELIVER_DELAY_S: '3',
    WEBHOOK_RETRY_SCHEDULE_S: '0,1,2,3,5,8',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_POLL_MS: '500',
    ...extra,
  };
}

/**
 * Three instances (by default) on one database of a private PostgreSQL cluster and one private
 * Redis, each reaching both through a fault proxy of its own, behind HAProxy, and a webhook
 * receiver.
 */
export class Cluster {
  readonly instances: Instance[] = [];
  readonly pgProxies: FaultProxy[] = [];
  readonly redisProxies: FaultProxy[] = [];
  readonly sink = new WebhookSink();
  haproxy: Managed | undefined;
  haproxyPort = 0;

  private constructor(
    readonly pg: PrivatePostgres,
    readonly redis: PrivateRedis,
    readonly database: string,
    readonly dir: string,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.haproxyPort}`;
  }

  get databaseUrl(): string {
    return this.pg.urlOf(this.database);
  }

  /** Creates the database and starts everything; the instances boot at once (the bootstrap lock serializes them). */
  static async start(pg: PrivatePostgres, redis: PrivateRedis, options: { name: string; instances?: number; env?: NodeJS.ProcessEnv }): Promise<Cluster> {
    const database = `chaos_${options.name}_${process.pid}`;
    pg.createDatabase(database);
    // With synchronous_commit off, a crash (`stopImmediate`) loses the last commits PostgreSQL
    // had acknowledged: an "acknowledged order lost" that would be the harness's doing. The
    // private cluster keeps it on; said again here so the database cannot inherit otherwise.
    const admin = await readPostgres(pg.url);
    try {
      await admin.rows(`alter database ${database} set synchronous_commit = on`);
    } finally {
      await admin.close();
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `fromagerie-chaos-${options.name}-`));
    const cluster = new Cluster(pg, redis, database, dir);
    try {
      await cluster.#start(options.instances ?? 3, options.env ?? {});
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  async #start(count: number, extra: NodeJS.ProcessEnv): Promise<void> {
    await this.sink.start();
    this.haproxyPort = await freeTcpPort();
    for (let i = 1; i <= count; i++) {
      const pgProxy = await new FaultProxy(`pg-app${i}`, this.pg.port).start();
      const redisProxy = await new FaultProxy(`redis-app${i}`, this.redis.port).start();
      this.pgProxies.push(pgProxy);
      this.redisProxies.push(redisProxy);
      const env = instanceEnv({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${pgProxy.port}/${this.database}`,
        REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
        // Scenarios share one Redis, and their accounts have the same ids: buckets of their own.
        REDIS_KEY_PREFIX: `${this.database}:`,
        PUBLIC_URL: this.base,
        // One DATA_DIR for all, as the compose file's shared volume: uploaded images live there.
        DATA_DIR: this.dir,
        // Each instance its own metrics port (the default 9464 would be taken by the first).
        METRICS_PORT: String(await freeTcpPort()),
        ...extra,
      });
      this.instances.push(new Instance(`app${i}`, await freeTcpPort(), env));
    }
    for (const instance of this.instances) instance.spawn();
    await Promise.all(this.instances.map((instance) => instance.ready()));
    this.haproxy = await startHaproxy(this.dir, { port: this.haproxyPort, servers: this.instances.map((i) => ({ name: i.name, port: i.port })) });
  }

  /** Kills every process, closes the proxies and the receiver, drops nothing of PostgreSQL's but this run's directory. */
  async stop(): Promise<void> {
    await Promise.all([...this.instances.flatMap((i) => i.lives), ...(this.haproxy ? [this.haproxy] : [])].map((m) => killAndWait(m)));
    await Promise.all([...this.pgProxies, ...this.redisProxies].map((p) => p.close()));
    await this.sink.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Waits until HAProxy routes to every instance again (its checks say ready), up to `timeoutMs`.
   * An instance that died by itself is started again (its exit is reported by the checks), so
   * the rest of the scenario still runs on three.
   */
  async waitAllReady(timeoutMs = 30_000): Promise<void> {
    for (const instance of this.instances) if (!instance.running) instance.spawn();
    await Promise.all(this.instances.map((instance) => instance.ready(timeoutMs)));
    // rise 1, inter 500 ms: one good check puts it back.
    // outside process: the private cluster's processes settle.
    await new Promise((r) => setTimeout(r, 1_200));
  }

  /** Every process's output, for a failure. */
  report(): string {
    const parts = this.instances.map((i) => i.output());
    if (this.haproxy) parts.push(`--- haproxy ---\n${outputOf(this.haproxy, 2000)}`);
    return parts.join('\n');
  }
}
