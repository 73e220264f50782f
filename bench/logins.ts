/**
 * `npm run bench:logins`: how many logins a second one instance serves, and whether the event
 * loop stays free while it does (scrypt runs on libuv's thread pool, node:crypto's async form).
 *
 * Starts the real service (SQLite, production settings, rate limits off: this measures the
 * work, not the limiter), then drives with wrk (a Lua script for the POST body):
 *   - POST /v2/customer/login with a right password (scrypt N=2^15: the bound),
 *   - POST /oauth/token, client_credentials (SHA-256 of a random secret: no slow hash),
 * and meanwhile times GET /v2/health once every 50 ms from this process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSample, cpuFigures, fmt, percentile, table } from './measure.js';
import { cleanup, fail, freePort, get, pinning, runCli, runState, startChild, waitForHealth } from './processes.js';
import { runWrk, wrkAvailable } from './wrk.js';

const SECONDS = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 8;

async function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

function luaPost(file: string, body: string, headers: Record<string, string>): void {
  const lines = ['wrk.method = "POST"', `wrk.body = ${JSON.stringify(body)}`, ...Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)];
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

/** GET /health every 50 ms until stopped: the event loop's responsiveness under the load. */
function probeHealth(base: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await get(`${base}/v2/health`, {}, 10_000).catch(() => undefined);
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies.sort((a, b) => a - b);
    },
  };
}

async function main(): Promise<void> {
  if (!wrkAvailable) await fail('bench:logins needs wrk (apt-get install -y wrk)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-logins-'));
  runState.dataDir = dataDir;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, CHEESE_ENV: 'production', PORT: String(port), DATA_DIR: dataDir, ADMIN_PASSWORD: 'bench operator passphrase 42', APP_SECRET: 'bench-secret-bench-secret-bench-secret-01', LOG_LEVEL: 'warn', PUBLIC_URL: base, RATE_LIMITS: 'off' };
  runCli(['db:seed'], env); // migrates and creates the admin
  const key = runCli(['api-keys', 'create', '--user', 'admin', '--scopes', 'admin', '--name', 'bench', '--quiet'], env).trim().split('\n').at(-1)!;
  const service = startChild('service', ['--import', 'tsx', 'src/server.ts'], env);
  await waitForHealth(base, service, 120_000);

  const json = { 'content-type': 'application/json' };
  const password = 'correct horse battery staple 42';
  const signUp = await post(`${base}/v2/customer`, JSON.stringify({ username: 'bench.customer', email: 'bench@example.com', password }), json);
  if (signUp.status !== 201) await fail(`sign-up failed: ${signUp.status} ${JSON.stringify(signUp.json)}`);
  const client = await post(`${base}/v2/oauth-clients`, JSON.stringify({ name: 'bench', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] }), { ...json, authorization: `Bearer ${key}` });
  const basic = `Basic ${Buffer.from(`${String(client.json.clientId)}:${String(client.json.clientSecret)}`).toString('base64')}`;

  const scenarios = [
    { name: 'POST /v2/customer/login (scrypt)', url: `${base}/v2/customer/login`, body: JSON.stringify({ username: 'bench.customer', password }), headers: json },
    { name: 'POST /oauth/token (client_credentials)', url: `${base}/oauth/token`, body: 'grant_type=client_credentials&scope=read%3Acheeses', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic } },
  ];
  const rows: string[][] = [];
  for (const scenario of scenarios) {
    const script = path.join(dataDir, 'post.lua');
    luaPost(script, scenario.body, scenario.headers);
    await runWrk(scenario.url, {}, 2, CONNECTIONS, script); // warm-up
    const probe = probeHealth(base);
    const before = cpuSample(service.process.pid!);
    const result = await runWrk(scenario.url, {}, SECONDS, CONNECTIONS, script);
    const after = cpuSample(service.process.pid!);
    const health = await probe.stop();
    const cpu = cpuFigures(before, after, result.seconds, 'child', pinning ? { server: '1', loadgen: '0' } : undefined);
    rows.push([
      scenario.name,
      fmt(result.rps),
      fmt(result.p50Ms, 1),
      fmt(result.p99Ms, 1),
      fmt(cpu.serverCpu),
      fmt(percentile(health, 50), 1),
      fmt(percentile(health, 99), 1),
      String(result.non2xx + result.socketErrors),
    ]);
  }
  console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each, wrk${pinning ? ' (service on CPU 1, wrk on CPU 0)' : ''}; load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}\n`);
  console.log(table(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'service CPU %', 'GET /health p50 ms meanwhile', 'p99 ms', 'errors'], rows, [false, true, true, true, true, true, true, true]));
}

main()
  .catch(async (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  })
  .finally(cleanup);
