/**
 * npm run bench:uploads [-- --uploads 10] [--rounds 3]
 *
 * Peak resident memory of the service (VmHWM of its process) while `--uploads` clients each
 * upload a 27-megapixel JPEG of about 7.8 MB at once, with the default IMAGE_CONCURRENCY and
 * IMAGE_QUEUE (uploads beyond them are 503). Issue 17's target: under 500 MB. Prints each
 * round's statuses and the peak; exit status 0 whatever the figures (a benchmark, not a test).
 */
import { randomFillSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { cleanup, freePort, runState, seedAndStaffKey, serviceEnv, startChild, waitForHealth } from './processes.js';

const { values: args } = parseArgs({ options: { uploads: { type: 'string', default: '10' }, rounds: { type: 'string', default: '3' } } });
const uploads = Number(args.uploads);
const rounds = Number(args.rounds);

/** A JPEG of random pixels (incompressible): 6000 × 4500 at quality 70 is about 7.8 MB. */
async function bigJpeg(): Promise<Buffer> {
  const width = 6000;
  const height = 4500;
  const noise = randomFillSync(Buffer.alloc(width * height * 3));
  return sharp(noise, { raw: { width, height, channels: 3 } }).blur(0.6).jpeg({ quality: 60 }).toBuffer();
}

function peakRssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}
function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-bench-uploads-'));
runState.dataDir = dataDir;
try {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = serviceEnv({ port, dataDir, environment: 'production', databaseUrl: undefined, schema: undefined, extra: Object.fromEntries((process.env.BENCH_SERVICE_ENV ?? '').split(' ').filter(Boolean).map((pair) => pair.split('=') as [string, string])) });
  const key = seedAndStaffKey(env);
  const image = await bigJpeg();
  const service = startChild('service', ['--import', 'tsx', 'src/server.ts'], env);
  await waitForHealth(base, service, 120_000);
  const pid = service.process.pid!;
  console.log(`Fromagerie upload memory — node ${process.version}; ${uploads} uploads at once of a ${(image.length / 1024 / 1024).toFixed(1)} MB, 27-megapixel JPEG; ${rounds} rounds`);
  console.log(`Idle: RSS ${rssMb(pid).toFixed(0)} MB`);
  for (let round = 1; round <= rounds; round++) {
    const statuses = await Promise.all(
      Array.from({ length: uploads }, async () => {
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(image)], { type: 'image/jpeg' }), 'big.jpg');
        try {
          return (await fetch(`${base}/v2/cheeses/1/uploadImage`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })).status;
        } catch (error) {
          return `error ${(error as Error).message}`;
        }
      }),
    );
    const counts = new Map<string, number>();
    for (const status of statuses) counts.set(String(status), (counts.get(String(status)) ?? 0) + 1);
    console.log(`Round ${round}: ${[...counts].map(([s, n]) => `${n} × ${s}`).join(', ')}; peak RSS so far ${peakRssMb(pid).toFixed(0)} MB, now ${rssMb(pid).toFixed(0)} MB`);
  }
  console.log(`Peak RSS: ${peakRssMb(pid).toFixed(0)} MB (target < 500 MB)`);
} finally {
  await cleanup();
}
