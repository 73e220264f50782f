import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrations } from '../../src/db/migrate.js';
import { freeTcpPort, privateServicesAvailable, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from '../helpers/private-services.js';
import type { FaultWindow } from './checker.js';
import { summary } from './checker.js';
import { Cluster, instanceEnv } from './cluster.js';
import { num, readPostgres, readSqlite } from './final-read.js';
import { Instance } from './instance.js';
import { Load, sleep } from './load.js';
import { killEverything, watchdog } from './processes.js';
import { chaosSeed, currentSeed, verify } from './scenario.js';
import { WebhookSink } from './webhook-sink.js';
import { buildWorld } from './world.js';

const WATCHDOG_MS = 115_000;
let disarm: () => void = () => {};
beforeEach((context) => {
  disarm = watchdog(WATCHDOG_MS, () => console.error(`watchdog: "${context.task.name}" (CHAOS_SEED=${currentSeed()}) ran ${WATCHDOG_MS} ms; killing every process it started`));
});
afterEach(() => {
  disarm();
  killEverything();
});

describe.skipIf(!privateServicesAvailable)('a cold boot of three instances at once on an empty PostgreSQL database', () => {
  let pg: PrivatePostgres | undefined;
  let redis: PrivateRedis | undefined;
  afterAll(async () => {
    await redis?.destroy();
    pg?.destroy();
  });

  it('migrates once, creates the admin once and seeds the sandbox once; every instance serves', async () => {
    pg = await startPrivatePostgres();
    redis = await startPrivateRedis();
    // Two rounds, each on a new empty database: the race, when there is one, does not lose every time.
    for (const round of [1, 2]) {
      const cluster = await Cluster.start(pg, redis, { name: `coldboot${round}` });
      try {
        const read = await readPostgres(cluster.databaseUrl);
        const count = async (sql: string) => num((await read.rows(sql))[0]!.n);
        try {
          const counts = {
            migrations: await count('select count(*) as n from kysely_migration'),
            distinctMigrations: await count('select count(distinct name) as n from kysely_migration'),
            admins: await count(`select count(*) as n from accounts where username = 'admin'`),
            testCustomers: await count(`select count(*) as n from accounts where username = 'test.customer'`),
            sandboxOrders: await count('select count(*) as n from orders'),
          };
          const expected = Object.keys(migrations).length;
          expect({ round, ...counts }, cluster.report()).toEqual({ round, migrations: expected, distinctMigrations: expected, admins: 1, testCustomers: 1, sandboxOrders: 10 });
        } finally {
          await read.close();
        }
        for (const instance of cluster.instances) expect((await fetch(`${instance.base}/v2/health/ready`)).status, cluster.report()).toBe(200);
        expect((await fetch(`${cluster.base}/v2/health`)).status).toBe(200);
        expect(cluster.instances.flatMap((i) => i.unexpectedExits()), cluster.report()).toEqual([]);
      } finally {
        await cluster.stop();
      }
    }
  });
});

describe('kill -9 of the single SQLite instance under order load', () => {
  it('loses no acknowledged write, and serves again after a restart', async () => {
    const seed = chaosSeed();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-chaos-sqlite-'));
    const sink = new WebhookSink();
    await sink.start();
    const port = await freeTcpPort();
    const instance = new Instance('sqlite', port, instanceEnv({ DATA_DIR: dir, PUBLIC_URL: `http://127.0.0.1:${port}`, METRICS_PORT: String(await freeTcpPort()) }));
    let load: Load | undefined;
    try {
      await instance.start();
      const world = await buildWorld(instance.base, sink.url, { customers: 4, editable: 6 });
      const before = readSqlite(dir);
      const outboxMark = num((await before.rows('select coalesce(max(id), 0) as id from outbox'))[0]!.id);
      await before.close();
      load = new Load(instance.base, world, seed);
      const startedAt = Date.now();
      load.start();
      // outside process: the cluster (HAProxy, PostgreSQL, instances) settles under its own timers.
      await sleep(3_000);
      const start = Date.now();
      // Orders in flight when the process dies: acknowledged ones must be on disk.
      load.burst(instance.base, 12);
      await sleep(30);
      await instance.kill9();
      await instance.start();
      // The restart takes about a second and frees the keys the dead process held (SQLite has
      // one instance), so a retried order is served from then on, not a lease (10 s) later.
      const windows: FaultWindow[] = [{ name: 'kill -9 until the restart serves', start, end: Date.now() }];
      // outside process: the cluster (HAProxy, PostgreSQL, instances) settles under its own timers.
      await sleep(7_000);
      await load.stop();
      // Read after the restart: the file as the new process recovered it.
      const read = readSqlite(dir);
      try {
        const problems = [...instance.unexpectedExits(), ...(await verify({ read, load, world, windows, sink, startedAt, outboxMark }))];
        const report = `sqlite kill -9, seed ${seed} (CHAOS_SEED=${seed} replays it): ${summary(load)}; down ${windows[0]!.end - windows[0]!.start} ms`;
        expect(problems, `${report}\n${instance.output()}`).toEqual([]);
        process.stdout.write(`${report}\n`);
      } finally {
        await read.close();
      }
    } finally {
      await load?.stop().catch(() => undefined);
      await instance.kill9();
      await sink.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
