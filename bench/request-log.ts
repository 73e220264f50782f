/**
 * npm run bench:request-log — what recording every request costs (docs/performance.md,
 * "Request log"). Two services as `npm start` runs them (SQLite, CHEESE_ENV=production, so
 * REQUEST_LOG_BODIES=errors), one with REQUEST_LOG=on and one with off, each on its own data
 * directory, their event loops pinned to one CPU (other threads free); wrk on the other. The perf bars (a cheese by id, a page of
 * the list, orders placed) run interleaved: on, off, off, on, on, off, so drift of the machine
 * falls on both. Reports req/s, CPU µs per request and p99 per mode, and on/off.
 * Also: how soon `GET /v2/request-logs?after=…&wait=25` answers after a 404 is answered.
 * `--database-url postgres://…` runs both services on PostgreSQL instead, each in a schema of its own.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { disposeServices, measureInterleaved, printOnOffTable, startOnOffService, type OnOffService } from './on-off.js';
import { cleanup, pinning } from './processes.js';
import { wrkAvailable } from './wrk.js';

if (!wrkAvailable) throw new Error('bench/request-log.ts needs wrk (apt-get install -y wrk)');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const { values: args } = parseArgs({ options: { 'database-url': { type: 'string' } } });
const databaseUrl = args['database-url'];

async function tailLatency(service: OnOffService): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    const head = (await (await fetch(`${service.base}/v2/request-logs?after=now`, { headers: service.auth })).json()) as { nextAfter: string };
    const held = fetch(`${service.base}/v2/request-logs?after=${encodeURIComponent(head.nextAfter)}&wait=25&status=404`, { headers: service.auth }).then(async (response) => {
      await response.text();
      return performance.now();
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const answered = await fetch(`${service.base}/v2/orders/99999999`, { headers: service.auth }).then(async (response) => {
      await response.text();
      return performance.now();
    });
    samples.push((await held) - answered);
  }
  return samples.sort((a, b) => a - b);
}

try {
  console.log(`Request log cost on ${databaseUrl ? 'PostgreSQL' : 'SQLite'} — node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}; wrk -t1 -c${CONNECTIONS}, 1 s warm-up then ${DURATION_S} s per run, ${ROUNDS} rounds interleaved; pinning ${pinning ? 'on (services\' event loops CPU 1, their other threads either CPU, wrk CPU 0)' : 'off'}.`);
  const services = { on: await startOnOffService('REQUEST_LOG', 'on', databaseUrl, { REQUEST_LOG: 'on' }), off: await startOnOffService('REQUEST_LOG', 'off', databaseUrl, { REQUEST_LOG: 'off' }) };
  printOnOffTable('REQUEST_LOG', await measureInterleaved(services, ROUNDS, DURATION_S, CONNECTIONS), ROUNDS);
  const tail = await tailLatency(services.on);
  console.log(`\nA held tail (after=…&wait=25&status=404) answered after the 404's own answer arrived: p50 ${tail[10]!.toFixed(0)} ms, p95 ${tail[18]!.toFixed(0)} ms, max ${tail[19]!.toFixed(0)} ms (20 samples).`);
  const recorded = (await (await fetch(`${services.on.base}/v2/request-logs?limit=1`, { headers: services.on.auth })).json()) as { items: unknown[] };
  if (recorded.items.length === 0) throw new Error('REQUEST_LOG=on recorded nothing');
} finally {
  await cleanup();
  await disposeServices();
}
