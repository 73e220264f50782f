/**
 * npm run bench:memory — what many distinct list URLs cost in resident memory
 * (docs/performance.md, "Memory: distinct list URLs"). One service as `npm start` runs it
 * (`--dist`: as the image runs it, `node --max-semi-space-size=2 dist/server.js`), one staff key,
 * 300 cheeses created through `/v2/cheeses/bulk`; then 3,000 distinct list URLs of full pages
 * (limit 100: about 100 KB each) by 8 clients at once, RSS of the service sampled every 100 ms.
 * Reports RSS before (after a warm-up of the same route), the peak, and after 5 s idle.
 * `--database-url postgres://…` runs it on PostgreSQL (a schema of its own); `--urls N` changes the count;
 * `--encoding identity|gzip|br` sets Accept-Encoding (fetch's own: gzip, deflate, br);
 * `--same` asks one URL as often (what the load alone costs);
 * `--set NAME=VALUE` (repeatable) sets a variable of the service (`--set READ_CACHE_MAX_BYTES=0`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchSchema, cleanup, freePort, seedAndStaffKey, serviceEnv, startChild, waitForHealth } from './processes.js';

const { values: args } = parseArgs({ options: { 'database-url': { type: 'string' }, urls: { type: 'string' }, dist: { type: 'boolean' }, set: { type: 'string', multiple: true }, same: { type: 'boolean' }, encoding: { type: 'string' }, snapshot: { type: 'boolean' } } });
const databaseUrl = args['database-url'];
const URLS = Number(args.urls ?? 3000);
const CLIENTS = 8;
const CHEESES = 300;
const SORTS = ['name', '-name', 'createdAt', '-createdAt', 'updatedAt', '-updatedAt', 'pricePerKg', '-pricePerKg', 'agedWeeks', '-agedWeeks'];

/** V8's heap (reserved, used) and external memory, in MB, from the service's own metrics. */
async function heapMb(metricsPort: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024;
  return `${read('nodejs_heap_size_total_bytes').toFixed(0)} / ${read('nodejs_heap_size_used_bytes').toFixed(0)} / ${read('nodejs_external_memory_bytes').toFixed(0)}`;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** The i-th distinct URL: 10 sorts x 10 page sizes (91 to 100) x 30 minimum ages; every page full (300 cheeses aged 0 to 49 weeks). */
function urlOf(i: number): string {
  const sort = SORTS[i % SORTS.length]!;
  const limit = 100 - (Math.floor(i / 10) % 10);
  const minAge = Math.floor(i / 100) % 30;
  return `/v2/cheeses?limit=${limit}&sort=${sort}&agedWeeksMin=${minAge}`;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-bench-memory-'));
const { schema, drop } = await benchSchema(databaseUrl);
try {
  const port = await freePort();
  const extra: NodeJS.ProcessEnv = args.snapshot ? { NODE_OPTIONS: '--heapsnapshot-signal=SIGUSR2' } : {};
  Object.assign(extra, Object.fromEntries((args.set ?? []).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])));
  const metricsPort = await freePort();
  const env = serviceEnv({ port, dataDir, environment: 'production', databaseUrl, schema, extra: { METRICS_PORT: String(metricsPort), ...extra } });
  const key = seedAndStaffKey(env);
  const command = args.dist ? ['--max-semi-space-size=2', 'dist/server.js'] : ['--import', 'tsx', 'src/server.ts'];
  const child = startChild('service', command, env);
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base, child, 120_000);
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  for (let batch = 0; batch < CHEESES / 100; batch++) {
    const operations = Array.from({ length: 100 }, (_, i) => ({ op: 'create', cheese: { name: `Memory tomme ${batch * 100 + i}`, milk: 'cow', origin: 'France', status: 'available', pricePerKg: 20 + i, agedWeeks: i % 50, stockQuantityKg: 5, tastingNotes: 'Nutty, long, with a hint of hazelnut and cellar. '.repeat(8) } }));
    const response = await fetch(`${base}/v2/cheeses/bulk`, { method: 'POST', headers: auth, body: JSON.stringify({ atomic: true, operations }) });
    const answer = (await response.json()) as { results?: Array<{ status: number }> };
    if (response.status >= 300 || !answer.results?.every((result) => result.status === 201)) throw new Error(`bulk create: ${response.status} ${JSON.stringify(answer).slice(0, 500)}`);
  }
  const pid = child.process.pid!;
  for (let i = 0; i < 200; i++) await (await fetch(`${base}/v2/cheeses?limit=100`, { headers: auth })).arrayBuffer();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const before = rssMb(pid);
  const heapBefore = await heapMb(metricsPort);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  let next = 0;
  let bytes = 0;
  const statuses = new Map<number, number>();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < URLS) {
        const response = await fetch(`${base}${urlOf(args.same ? 0 : next)}`, { headers: args.encoding ? { ...auth, 'accept-encoding': args.encoding } : auth });
        next++;
        const size = (await response.arrayBuffer()).byteLength;
        bytes += size;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    }),
  );
  const atEnd = rssMb(pid);
  const heapAtEnd = await heapMb(metricsPort);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  clearInterval(sampler);
  const idle = rssMb(pid);
  const heapIdle = await heapMb(metricsPort);
  // V8's memory reducer starts 8 s after allocation slows down: by 25 s it has had its turn.
  await new Promise((resolve) => setTimeout(resolve, 20_000));
  const idle25 = rssMb(pid);
  const heapIdle25 = await heapMb(metricsPort);
  const distinct = args.same ? 1 : new Set(Array.from({ length: URLS }, (_, i) => urlOf(i))).size;
  console.log(`Memory of ${distinct.toLocaleString('en-US')} distinct list URLs on ${databaseUrl ? 'PostgreSQL' : 'SQLite'} (${args.dist ? 'dist' : 'tsx'}), node ${process.version}; statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${(bytes / URLS / 1024).toFixed(0)} KB per answer on average.`);
  console.log(`| RSS before | peak | at the end | after 5 s idle | growth (peak) | heap reserved / used / external MB: before | at the end | idle |\n|---:|---:|---:|---:|---:|---|---|---|\n| ${before.toFixed(0)} MB | ${peak.toFixed(0)} MB | ${atEnd.toFixed(0)} MB | ${idle.toFixed(0)} MB | ${(peak - before).toFixed(0)} MB | ${heapBefore} | ${heapAtEnd} | ${heapIdle} |`);
  console.log(`After 25 s idle: RSS ${idle25.toFixed(0)} MB, heap ${heapIdle25}.`);
  if (args.snapshot) {
    // A heap snapshot begins with a full GC: what is left is what the process holds, not garbage.
    process.kill(pid, 'SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    console.log(`after a full GC (heap snapshot written in the service's directory): RSS ${rssMb(pid).toFixed(0)} MB, heap ${await heapMb(metricsPort)}`);
  }
} finally {
  await cleanup();
  await drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
