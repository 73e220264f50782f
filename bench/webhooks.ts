/**
 * Webhook fan-out (part of `npm run bench`; alone: `npm run bench:webhooks [-- --database-url postgres://…]`).
 *
 * Starts the real service (SQLite in a temporary DATA_DIR, or the PostgreSQL given, in a fresh
 * schema) and a receiver in this process on loopback that answers 204 and notes when each
 * delivery arrived. Ten webhooks (the most one account may have) subscribe to `cheese.*`, so
 * every committed cheese event becomes ten deliveries. Events are committed through the API
 * (`POST /v2/cheeses/bulk`, creates), and latency is measured from the event's `created_at`
 * (stamped inside the committing transaction, so a little before the commit: the figure is
 * an upper bound) to its arrival at the receiver.
 *
 * Two phases:
 * - steady: a fixed rate of events for `--duration` seconds, the load a shop would send; the
 *   p50/p99 from commit to receipt at that rate, and whether the dispatcher kept up;
 * - backlog: a burst committed at once, then drained as fast as the dispatcher can: the most
 *   deliveries per second, and the service's CPU per delivery.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { busyTicks, fmt, processTicks, CLOCK_TICKS } from './measure.js';
import { benchSchema, cleanup, fail, freePort, pinning, runState, seedAndStaffKey, serviceEnv, startChild, waitForHealth } from './processes.js';

const { values: args } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    duration: { type: 'string', default: '10' },
    rates: { type: 'string', default: '20,100', description: 'cheese events per second of each steady phase, comma-separated' },
    burst: { type: 'string', default: '1000', description: 'cheese events committed at once in the backlog phase' },
    'cpu-prof-dir': { type: 'string', description: 'write a V8 CPU profile of the service there' },
  },
});
const WEBHOOKS = 10;
const BULK = 100;

async function json(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Arrival {
  eventId: string;
  latencyMs: number;
  at: number;
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-webhooks-'));
  runState.dataDir = dataDir;
  const [port, receiverPort] = [await freePort(), await freePort()];
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = args['database-url'];
  const { schema, drop: dropSchema } = await benchSchema(databaseUrl);

  let arrivals: Arrival[] = [];
  const receiver = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created_at: string };
      arrivals.push({ eventId: event.id, latencyMs: at - Date.parse(event.created_at), at });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));

  // Development: loopback receivers are refused in production (the SSRF guard).
  const env = serviceEnv({ port, dataDir, environment: 'development', databaseUrl, schema });

  try {
    const key = seedAndStaffKey(env);
    const profile = args['cpu-prof-dir'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args['cpu-prof-dir'])}`] : [];
    const service = startChild('service', [...profile, '--import', 'tsx', 'src/server.ts'], env);
    await waitForHealth(base, service, 120_000);
    const staff = { authorization: `Bearer ${key}` };
    for (let i = 0; i < WEBHOOKS; i++) {
      const created = await json(`${base}/v2/webhooks`, 'POST', { url: `http://127.0.0.1:${receiverPort}/hooks/${i}`, events: ['cheese.*'] }, staff);
      if (created.status !== 201) await fail(`registering a webhook: ${created.status} ${JSON.stringify(created.body)}`);
    }
    let made = 0;
    const createCheeses = async (count: number) => {
      const operations = Array.from({ length: count }, () => ({ op: 'create', cheese: { name: `Bench cheese ${++made}`, pricePerKg: 20, stockQuantityKg: 10 } }));
      const res = await json(`${base}/v2/cheeses/bulk`, 'POST', { operations }, staff);
      if (res.status !== 200 && res.status !== 207) await fail(`bulk create: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    };
    const waitForArrivals = async (expected: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (arrivals.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };

    // Warm-up: connections open, code paths compiled.
    for (let i = 0; i < 5; i++) await createCheeses(20);
    await waitForArrivals(5 * 20 * WEBHOOKS, 30_000);
    arrivals = [];

    const rows: string[] = [];
    let missing = false;
    const cores = os.availableParallelism();
    /** Runs one phase: `commit` commits the events; the row waits until every delivery arrived. */
    const phase = async (label: string, events: number, commit: () => Promise<void>) => {
      arrivals = [];
      const service0 = processTicks(service.process.pid!)!;
      const machine0 = busyTicks();
      const start = Date.now();
      await commit();
      await waitForArrivals(events * WEBHOOKS, 120_000);
      const seconds = (Math.max(start + 1, ...arrivals.map((a) => a.at)) - start) / 1000;
      const serviceTicks = processTicks(service.process.pid!)! - service0;
      const machine1 = busyTicks();
      const busy = (cpu: string) => `${fmt((((machine1.get(cpu) ?? 0) - (machine0.get(cpu) ?? 0)) / CLOCK_TICKS / seconds) * 100)}%`;
      const perCpu = Array.from({ length: cores }, (_, i) => busy(`cpu${i}`)).join(' / ');
      const latencies = arrivals.map((a) => a.latencyMs).sort((x, y) => x - y);
      const distinct = new Set(arrivals.map((a) => a.eventId)).size;
      if (arrivals.length !== events * WEBHOOKS || distinct !== events) missing = true;
      rows.push(
        `| ${label} | ${events} | ${arrivals.length} | ${fmt(arrivals.length / seconds)} | ${fmt(percentile(latencies, 50), 1)} | ${fmt(percentile(latencies, 99), 1)} | ${fmt((serviceTicks / CLOCK_TICKS / seconds) * 100)}% | ${fmt(((serviceTicks / CLOCK_TICKS) * 1e6) / arrivals.length)} | ${perCpu} |`,
      );
    };

    // Steady: a fixed rate of events, committed in small batches every 50 ms (an open loop:
    // the next batch goes out on time whether or not the last one is delivered).
    const duration = Number(args.duration);
    for (const rate of args.rates.split(',').map(Number)) {
      const perTick = Math.max(1, Math.round(rate / 20));
      const ticks = Math.round((duration * 1000) / 50);
      await phase(`steady: ${perTick * 20} events/s (${perTick * 20 * WEBHOOKS} deliveries/s offered) for ${duration} s`, ticks * perTick, async () => {
        const start = Date.now();
        const pending: Promise<void>[] = [];
        for (let tick = 0; tick < ticks; tick++) {
          pending.push(createCheeses(perTick));
          await new Promise((r) => setTimeout(r, Math.max(0, start + (tick + 1) * 50 - Date.now())));
        }
        await Promise.all(pending);
      });
    }

    // Backlog: `burst` events committed as fast as the API takes them, drained at full speed.
    const burst = Number(args.burst);
    await phase(`backlog: ${burst} events committed at once`, burst, async () => {
      const commits: Promise<void>[] = [];
      for (let left = burst; left > 0; left -= BULK) commits.push(createCheeses(Math.min(BULK, left)));
      await Promise.all(commits);
    });

    console.log(`\nWebhook fan-out, ${databaseUrl ? 'PostgreSQL' : 'SQLite'}: ${WEBHOOKS} webhooks on cheese.*, a receiver on loopback answering 204${pinning ? ' (service on CPU 1, this process on CPU 0)' : ''}; load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
    console.log(`| phase | events | deliveries received | deliveries/s | p50 ms commit→receipt | p99 ms | service CPU | µs service CPU/delivery | busy per CPU (${Array.from({ length: cores }, (_, i) => i).join(' / ')}) |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of rows) console.log(row);
    if (missing) {
      console.log('MISSING deliveries: some event did not reach every webhook exactly once in time');
      process.exitCode = 1;
    }
  } finally {
    receiver.closeAllConnections();
    receiver.close();
    await dropSchema();
  }
}

main()
  .catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
  .finally(cleanup);
