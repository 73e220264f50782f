/**
 * `npm run bench:cluster [-- --duration 10 --connections 50 --pool-size 10]` (issue 20): the
 * service as several instances behind HAProxy, on a PostgreSQL cluster of its own (production
 * durability) and Redis, on this machine. Measured with wrk, in this order:
 *
 *   1. GET /v2/cheeses/{id} straight to one instance (pinned to CPU 1; wrk on CPU 0);
 *   2. the same through HAProxy (pinned to CPU 0, beside wrk) to that one instance: the proxy's overhead;
 *   3. POST /v2/orders through HAProxy to that one instance;
 *   4. two more instances started, everything unpinned but wrk: GET through HAProxy to three;
 *   5. POST /v2/orders through HAProxy to three.
 *
 * Each row: req/s, latency, and CPU time per request of each process (from /proc/<pid>/stat
 * before and after: the instances, HAProxy, PostgreSQL's postmaster and backends, Redis, wrk),
 * and how busy the whole machine was. Afterwards the stock must be exact (no oversell).
 * Method and figures: docs/performance.md, "Cluster (issue 20)"; the model: docs/scaling.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { busyTicks, CLOCK_TICKS, fmt, load, processTicks } from './measure.js';
import { childrenOf, cpuBetween, cpuSeconds, haproxyAvailable, postgresAvailable, startBenchPostgres, startBenchRedis, startHaproxy, startInstance, tmpDir, type BenchPostgres } from './cluster-services.js';
import { orderFixtures, stockExact } from './order-load.js';
import { alive, cleanup, fail, freePort, LOADGEN_CPU, pinning, runState, seedAndStaffKey, serviceEnv, SERVER_CPU, stopChild, waitForHealth, type Child } from './processes.js';
import { runWrk, wrkAvailable, type WrkResult } from './wrk.js';
import { spawnSync } from 'node:child_process';

const { values: args } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' }, 'pool-size': { type: 'string', default: '10' } } });
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);

interface Row {
  name: string;
  wrk: WrkResult;
  /** CPU seconds during the measured run, per process group. */
  cpu: { instances: number[]; haproxy: number; postgres: number; redis: number; wrk: number; machine: number };
  seconds: number;
}

let postgres: BenchPostgres | undefined;
const rows: Row[] = [];

async function measure(name: string, url: string, headers: Record<string, string>, script: string | undefined, instances: Child[], haproxy: Child | undefined, redis: Child): Promise<Row> {
  await runWrk(url, headers, 2, CONNECTIONS, script); // warm-up
  const pgPids = () => [postgres!.pid(), ...childrenOf(postgres!.pid())];
  const sample = () => ({
    instances: instances.map((i) => cpuSeconds([i.process.pid!])),
    haproxy: cpuSeconds(haproxy ? [haproxy.process.pid!] : []),
    postgres: cpuSeconds(pgPids()),
    redis: cpuSeconds([redis.process.pid!]),
    wrk: (processTicks('self', 'children') ?? 0) / CLOCK_TICKS,
    machine: (busyTicks().get('cpu') ?? 0) / CLOCK_TICKS,
    at: performance.now(),
  });
  const before = sample();
  const wrk = await runWrk(url, headers, DURATION, CONNECTIONS, script);
  const after = sample();
  const row: Row = {
    name,
    wrk,
    seconds: (after.at - before.at) / 1000,
    cpu: {
      instances: after.instances.map((a, i) => cpuBetween(before.instances[i]!, a)),
      haproxy: cpuBetween(before.haproxy, after.haproxy),
      postgres: cpuBetween(before.postgres, after.postgres),
      redis: cpuBetween(before.redis, after.redis),
      wrk: after.wrk - before.wrk,
      machine: after.machine - before.machine,
    },
  };
  rows.push(row);
  for (const line of wrk.scriptLines) console.log(`    ${line}`);
  if (wrk.socketErrors + wrk.non2xx > 0) console.log(wrk.report.replace(/^/gm, '    '));
  console.log(`  ${name}: ${fmt(wrk.rps)} req/s, p99 ${fmt(wrk.p99Ms, 1)} ms, errors ${wrk.non2xx + wrk.socketErrors} (load ${load()})`);
  return row;
}

/** % of one core over the measured run (wrk's own seconds; the machine's over the wall time). */
const share = (row: Row, seconds: number) => `${Math.round((seconds / (row.wrk.seconds || row.seconds)) * 100)}%`;
const perRequest = (row: Row, seconds: number) => (row.wrk.requests > 0 ? fmt((seconds / row.wrk.requests) * 1e6) : '-');

function printRows(): void {
  console.log(`\nCluster, ${DURATION} s per run, wrk 1 thread ${CONNECTIONS} connections; load average at the end ${load()}`);
  console.log('| run | req/s | p50 ms | p99 ms | errors | instances CPU (each) | µs instance CPU/req (sum) | HAProxy CPU | µs HAProxy/req | PostgreSQL CPU | µs PostgreSQL/req | Redis µs/req | wrk CPU | machine busy (of 200%) |');
  console.log('|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const instanceSum = row.cpu.instances.reduce((a, b) => a + b, 0);
    console.log(
      `| ${row.name} | ${fmt(row.wrk.rps)} | ${fmt(row.wrk.p50Ms, 1)} | ${fmt(row.wrk.p99Ms, 1)} | ${row.wrk.non2xx + row.wrk.socketErrors} | ${row.cpu.instances.map((s) => share(row, s)).join(' + ')} | ${perRequest(row, instanceSum)} | ${share(row, row.cpu.haproxy)} | ${perRequest(row, row.cpu.haproxy)} | ${share(row, row.cpu.postgres)} | ${perRequest(row, row.cpu.postgres)} | ${perRequest(row, row.cpu.redis)} | ${share(row, row.cpu.wrk)} | ${Math.round((row.cpu.machine / row.seconds) * 100)}% |`,
    );
  }
}

async function main(): Promise<void> {
  if (!wrkAvailable || !haproxyAvailable || !postgresAvailable) await fail('bench:cluster needs wrk, haproxy and PostgreSQL binaries (apt-get install -y wrk haproxy postgresql)');
  const dir = tmpDir();
  runState.dataDir = dir;
  console.log(`PostgreSQL, Redis, instances and HAProxy of this run in ${dir} (load average ${load()})`);
  postgres = await startBenchPostgres();
  // However the run ends (fail() exits): stopped after the instances, its files removed.
  process.on('exit', () => postgres?.stop());
  const redis = await startBenchRedis();
  const ports = [await freePort(), await freePort(), await freePort()];
  const proxyPort = await freePort();
  const metricsPorts = [await freePort(), await freePort(), await freePort()];
  const envOf = (port: number, i: number) =>
    serviceEnv({
      port,
      dataDir: path.join(dir, `app${i}`),
      environment: 'production',
      databaseUrl: postgres!.url,
      schema: 'public',
      // One PUBLIC_URL for all: it is the login tokens' issuer (a token from one instance must pass on every other).
      extra: { PUBLIC_URL: `http://127.0.0.1:${proxyPort}`, REDIS_URL: redis.url, TRUST_PROXY: '127.0.0.1', DATABASE_POOL_SIZE: args['pool-size'], DRAIN_DELAY_MS: '0', PAYMENT_CAPTURE_DELAY_S: '-1', SHIP_DELAY_S: '-1', DELIVER_DELAY_S: '-1', METRICS_PORT: String(metricsPorts[i]) },
    });
  for (const i of [0, 1, 2]) fs.mkdirSync(path.join(dir, `app${i}`));
  const key = seedAndStaffKey(envOf(ports[0]!, 0));
  const read = { 'x-api-key': key };

  const first = startInstance('app1', envOf(ports[0]!, 0), pinning ? SERVER_CPU : undefined);
  const direct = `http://127.0.0.1:${ports[0]}`;
  await waitForHealth(direct, first, 120_000);
  const { cheeseIds, script, probe } = await orderFixtures(direct, key, dir);
  const readPath = `/v2/cheeses/${cheeseIds[0]}`;
  console.log(`Instances pinned: ${pinning ? `app1 on CPU ${SERVER_CPU}, wrk and HAProxy on CPU ${LOADGEN_CPU}` : 'no (taskset or a second CPU missing)'}`);

  const proxy = `http://127.0.0.1:${proxyPort}`;
  const haproxy1 = startHaproxy(dir, proxyPort, [ports[0]!], pinning ? LOADGEN_CPU : undefined);
  await waitForHealth(proxy, haproxy1, 20_000);
  // Direct and proxied alternate, three pairs: other load on the machine drifts, and a pair shares it.
  const pairs: [Row, Row][] = [];
  for (const round of [1, 2, 3]) {
    pairs.push([
      await measure(`GET by id, direct, 1 instance (${round})`, `${direct}${readPath}`, read, undefined, [first], undefined, redis.child),
      await measure(`GET by id, HAProxy, 1 instance (${round})`, `${proxy}${readPath}`, read, undefined, [first], haproxy1, redis.child),
    ]);
  }
  const refused = await probe(proxy);
  if (refused) throw new Error(`an order through HAProxy was refused: ${refused}`);
  await measure('POST /v2/orders, HAProxy, 1 instance', `${proxy}/v2/orders`, {}, script, [first], haproxy1, redis.child);
  await stopChild(haproxy1, 5_000);

  // Three instances: unpinned (two cores cannot give each its own), app1 too.
  if (pinning) spawnSync('taskset', ['-a', '-p', '-c', '0,1', String(first.process.pid)], { stdio: 'ignore' });
  const others = [1, 2].map((i) => startInstance(`app${i + 1}`, envOf(ports[i]!, i), undefined));
  for (const [i, other] of others.entries()) await waitForHealth(`http://127.0.0.1:${ports[i + 1]}`, other, 120_000);
  const haproxy3 = startHaproxy(dir, proxyPort, ports, undefined);
  await waitForHealth(proxy, haproxy3, 20_000);
  await new Promise((r) => setTimeout(r, 2_500)); // every server up (rise 2 × inter 1 s)
  const all = [first, ...others];
  await measure('GET by id, HAProxy, 3 instances', `${proxy}${readPath}`, read, undefined, all, haproxy3, redis.child);
  await measure('POST /v2/orders, HAProxy, 3 instances', `${proxy}/v2/orders`, {}, script, all, haproxy3, redis.child);

  const stock = await stockExact(postgres.url, cheeseIds);
  printRows();
  for (const [directRow, proxiedRow] of pairs) {
    const directCpu = directRow.cpu.instances[0]! / directRow.wrk.seconds;
    console.log(
      `Proxy overhead on reads: ${fmt((1 - proxiedRow.wrk.rps / directRow.wrk.rps) * 100, 1)}% fewer req/s; p50 ${fmt(directRow.wrk.p50Ms, 2)} -> ${fmt(proxiedRow.wrk.p50Ms, 2)} ms; ` +
        `HAProxy ${perRequest(proxiedRow, proxiedRow.cpu.haproxy)} µs CPU/req = ${fmt((proxiedRow.cpu.haproxy / proxiedRow.cpu.instances[0]!) * 100, 0)}% of the instance's ${perRequest(proxiedRow, proxiedRow.cpu.instances[0]!)} µs; ` +
        `direct baseline instance at ${Math.round(directCpu * 100)}% of its core${directCpu >= 0.95 ? ' (saturated)' : ` (not saturated: wrk ${share(directRow, directRow.cpu.wrk)}, machine ${Math.round((directRow.cpu.machine / directRow.seconds) * 100)}% of 200%)`}.`,
    );
  }
  console.log(`Orders: ${stock.orders} placed on the bench cheeses; stock ${stock.exact ? 'exact (no oversell)' : `NOT exact: ${stock.detail}`}.`);
  const errors = rows.reduce((n, r) => n + r.wrk.non2xx + r.wrk.socketErrors, 0);
  if (errors > 0 || !stock.exact) process.exitCode = 1;
  for (const child of all) if (!alive(child)) console.error(`${child.name} died: ${child.output.join('').slice(-2000)}`);
}

main()
  .catch((error: unknown) => fail(error instanceof Error ? error.stack ?? error.message : String(error)))
  .finally(cleanup);
