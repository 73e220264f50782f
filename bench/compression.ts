/**
 * CPU per request of cached catalogue lists in each coding (docs/performance.md, "Compressed
 * answers"): one in-process instance (SQLite, seeded, test configuration), wrk -t1 -c4 for 5 s
 * per row after a 1 s warm-up, this process's CPU time (libuv's pool included) over the
 * requests wrk counted. wrk runs asynchronously: a synchronous spawn would stop the server.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTestApp } from '../test/helpers/app.js';
import { wrkAvailable } from './wrk.js';

const run = promisify(execFile);
if (!wrkAvailable) throw new Error('bench/compression.ts needs wrk (apt-get install -y wrk)');

const t = await createTestApp({ seed: true });
const admin = `Bearer ${await t.key(['admin'])}`;
const rows: [string, string][] = [
  ['/v2/cheeses?limit=100', 'identity'],
  ['/v2/cheeses?limit=100', 'gzip'],
  ['/v2/cheeses?limit=100', 'br'],
  ['/v2/cheeses?limit=20', 'identity'],
  ['/v2/cheeses?limit=20', 'br'],
];
console.log('| answer | coding | requests | req/s | CPU ms/request |\n|---|---|---|---|---|');
for (const [path, coding] of rows) {
  const headers = ['-H', `Authorization: ${admin}`, ...(coding === 'identity' ? [] : ['-H', `Accept-Encoding: ${coding}`])];
  await run('wrk', ['-t1', '-c4', '-d1s', ...headers, t.http.baseUrl + path]);
  const before = process.cpuUsage();
  const { stdout } = await run('wrk', ['-t1', '-c4', '-d5s', ...headers, t.http.baseUrl + path]);
  const cpu = process.cpuUsage(before);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1]);
  const rps = Number(/Requests\/sec:\s+(\S+)/.exec(stdout)?.[1]);
  console.log(`| \`${path}\` | ${coding} | ${requests} | ${rps.toFixed(0)} | ${((cpu.user + cpu.system) / 1000 / requests).toFixed(3)} |`);
}
await t.close();
