/**
 * npm run bench:tracing — what OpenTelemetry traces cost (docs/performance.md, "Tracing cost").
 * Two services as `npm start` runs them (SQLite, CHEESE_ENV=production), one with
 * OTEL_EXPORTER_OTLP_ENDPOINT set (exporting to a local OTLP/HTTP receiver in this process that
 * counts and discards) and one without, each on its own data directory, pinned to the same CPU;
 * wrk on the other. The perf bars (a cheese by id, a page of the list, orders placed) run
 * interleaved: on, off, off, on, on, off, so drift of the machine falls on both. Reports req/s,
 * CPU µs per request and p99 per mode, on/off, the spans received, and each service's RSS.
 * `--database-url postgres://…` runs both services on PostgreSQL instead, each in a schema of its own.
 * BENCH_DURATION_S and BENCH_ROUNDS shorten it (a smoke: BENCH_DURATION_S=1 BENCH_ROUNDS=1).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { disposeServices, measureInterleaved, printOnOffTable, startOnOffService } from './on-off.js';
import { cleanup, pinning } from './processes.js';
import { wrkAvailable } from './wrk.js';

if (!wrkAvailable) throw new Error('bench/tracing.ts needs wrk (apt-get install -y wrk)');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const { values: args } = parseArgs({ options: { 'database-url': { type: 'string' } } });
const databaseUrl = args['database-url'];

/** The collector: every export answered at once and thrown away; spans counted. */
const exported = { requests: 0, spans: 0, bytes: 0 };
const collector = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    exported.requests++;
    exported.bytes += body.length;
    exported.spans += (body.toString('utf8').match(/"spanId"/g) ?? []).length;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

/** The service's resident memory now (Linux), in MB. */
function rssMb(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

try {
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  console.log(`Tracing cost on ${databaseUrl ? 'PostgreSQL' : 'SQLite'} — node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}; wrk -t1 -c${CONNECTIONS}, 1 s warm-up then ${DURATION_S} s per run, ${ROUNDS} round(s) interleaved; pinning ${pinning ? 'on (services\' event loops CPU 1, their other threads either CPU, wrk CPU 0)' : 'off'}.`);
  const withoutOtel = (env: NodeJS.ProcessEnv) => {
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  };
  const services = { on: await startOnOffService('tracing', 'on', databaseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), off: await startOnOffService('tracing', 'off', databaseUrl, {}, withoutOtel) };
  const started = { on: rssMb(services.on.child.process.pid!), off: rssMb(services.off.child.process.pid!) };
  printOnOffTable('tracing', await measureInterleaved(services, ROUNDS, DURATION_S, CONNECTIONS), ROUNDS);
  // The last batch goes out within a second of its spans' end.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  console.log(`\nExported: ${exported.spans.toLocaleString('en-US')} spans in ${exported.requests} OTLP/HTTP posts (${(exported.bytes / 1e6).toFixed(1)} MB of JSON).`);
  console.log(`RSS after start: on ${started.on.toFixed(0)} MB, off ${started.off.toFixed(0)} MB; after the runs: on ${rssMb(services.on.child.process.pid!).toFixed(0)} MB, off ${rssMb(services.off.child.process.pid!).toFixed(0)} MB.`);
  if (exported.spans === 0) throw new Error('tracing on exported no span');
} finally {
  await cleanup();
  collector.close();
  await disposeServices();
}
