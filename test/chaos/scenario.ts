import type { PrivatePostgres, PrivateRedis } from '../helpers/private-services.js';
import { checkFailures, checkLifecycles, checkObservedLifecycles, checkOrders, checkRenames, checkStock, summary, type FaultWindow } from './checker.js';
import { Cluster } from './cluster.js';
import { num, readPostgres, type FinalRead } from './final-read.js';
import { Load, sleep } from './load.js';
import { checkSameEverywhere } from './consistency-check.js';
import { checkSharedLimits } from './limit-check.js';
import { checkWebhooks, settleWebhooks } from './webhook-check.js';
import type { WebhookSink } from './webhook-sink.js';
import { buildWorld, type World } from './world.js';

/** Load before the fault, and after it: longer than GRACE_MS, so requests after the grace are checked too. */
const WARM_MS = 3_000;
const AFTER_MS = 7_000;
/** Retries (0,1,2,3,5 s) and dead-lettering of the last events. */
const WEBHOOK_SETTLE_MS = 25_000;
/** Catalogue writes show on every instance within 1 s (issue 20); checked after 1.5 s. */
const PROPAGATION_MS = 1_500;

export interface FaultContext {
  cluster: Cluster;
  world: World;
  load: Load;
  /** Records a fault window from `start` to now (or `end`). */
  window(name: string, start: number, end?: number): void;
  /** Problems the fault itself found (an exit code, an instance that did not come back). */
  problems: string[];
  /** Records a time from `start` to now when the instances count rate limits alone (Redis away): no fault window for failures. */
  limitsLocal(start: number): void;
}

let current: number | undefined;

/** The seed of this run (`CHAOS_SEED`, or a random one), remembered for the watchdog's message. */
export function chaosSeed(): number {
  current = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : Math.floor(Math.random() * 1_000_000);
  return current;
}

/** The seed of the scenario running now, if any: a watchdog that fires prints it. */
export function currentSeed(): number | undefined {
  return current;
}

/** Every check of the record and the final read but the cross-instance one (the webhooks settled first). */
export async function verify(run: { read: FinalRead; load: Load; world: World; windows: FaultWindow[]; /** Several instances sharing Redis: when they count alone (absent: one instance, nothing shared to check). */
  localLimits?: FaultWindow[]; sink: WebhookSink; startedAt: number; outboxMark: number }): Promise<string[]> {
  const { read, load, world } = run;
  const problems = [...checkFailures(load.record, run.windows, run.startedAt), ...checkObservedLifecycles(load.record), ...(run.localLimits ? checkSharedLimits(run.load.record, run.localLimits, run.startedAt) : [])];
  await settleWebhooks(read, world.webhookId, WEBHOOK_SETTLE_MS);
  problems.push(...(await checkStock(read, world)));
  problems.push(...(await checkOrders(read, load)));
  problems.push(...(await checkLifecycles(read)));
  problems.push(...(await checkRenames(read, load)));
  problems.push(...(await checkWebhooks(read, world.webhookId, run.outboxMark, run.sink)));
  return problems;
}

/**
 * One scenario: a fresh database and cluster, the world, the seeded load, `fault` while the
 * load runs, then quiesce and every check. Throws with the seed, the violations, a summary of
 * the record and the processes' output when anything is wrong.
 */
export async function runScenario(services: { pg: PrivatePostgres; redis: PrivateRedis }, name: string, fault: (context: FaultContext) => Promise<void>, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const seed = chaosSeed();
  const cluster = await Cluster.start(services.pg, services.redis, { name, env });
  const windows: FaultWindow[] = [];
  const localLimits: FaultWindow[] = [];
  const problems: string[] = [];
  let load: Load | undefined;
  try {
    const world = await buildWorld(cluster.base, cluster.sink.url, { customers: 4, editable: 6 });
    const before = await readPostgres(cluster.databaseUrl);
    const outboxMark = num((await before.rows('select coalesce(max(id), 0) as id from outbox'))[0]!.id);
    await before.close();
    load = new Load(cluster.base, world, seed);
    const startedAt = Date.now();
    load.start();
    // outside process: the cluster's instances (child processes) serve the load this long before the fault.
    await sleep(WARM_MS);
    await fault({ cluster, world, load, window: (n, start, end) => windows.push({ name: n, start, end: end ?? Date.now() }), problems, limitsLocal: (start) => localLimits.push({ name: 'rate limits counted per instance', start, end: Date.now() }) });
    // outside process: and this long after it, recovering under load.
    await sleep(AFTER_MS);
    await load.stop();
    const lastWrite = Math.max(0, ...load.renames.map((r) => r.t0), ...load.record.filter((e) => e.method !== 'GET').map((e) => e.t1));
    for (const instance of cluster.instances) problems.push(...instance.unexpectedExits());
    // Connected after the fault: a connection from before would not have survived PostgreSQL's restart.
    const read = await readPostgres(cluster.databaseUrl);
    try {
      problems.push(...(await verify({ read, load, world, windows, localLimits, sink: cluster.sink, startedAt, outboxMark })));
      await sleep(Math.max(0, lastWrite + PROPAGATION_MS - Date.now()));
      const serving = cluster.instances.filter((i) => i.running).map((i) => i.base);
      problems.push(...(await checkSameEverywhere(serving, world.catalogueUrls, world.customers[0]!.key)));
    } finally {
      await read.close();
    }
    const report = `${name}, seed ${seed}: ${summary(load)}; fault windows ${JSON.stringify(windows.map((w) => ({ name: w.name, ms: w.end - w.start })))}`;
    if (problems.length > 0) throw new Error(`${report}\n\nVIOLATIONS:\n- ${problems.join('\n- ')}\n\n${cluster.report()}`);
    return report;
  } catch (error) {
    if (error instanceof Error && !error.message.includes('VIOLATIONS')) error.message = `${name}, seed ${seed} (CHAOS_SEED=${seed} replays it): ${error.message}\n\n${cluster.report()}`;
    else if (error instanceof Error) error.message = `CHAOS_SEED=${seed} replays it. ${error.message}`;
    throw error;
  } finally {
    await load?.stop().catch(() => undefined);
    await cluster.stop();
  }
}
