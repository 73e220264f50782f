import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../packages/sdk/src/index.js';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { runCli, startServer } from '../helpers/server.js';

/**
 * The developer CLI of issue 30 (`listen`, `trigger`, `events resend`) as a developer runs it:
 * bin/fromagerie.js against a real server process, forwarding to a real local receiver. The
 * server runs with the order worker's steps off (the sandbox advance moves orders), so the
 * events are exactly those the triggers cause.
 */
const TIMEOUT_MS = 240_000;

let storage: TestStorage;
let serverEnv: NodeJS.ProcessEnv;
let port: number;
let server: ChildProcess;
let key: string;
let apiBase: string;
let configHome: string;

async function stopServer(): Promise<void> {
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  storage = await createTestStorage();
  serverEnv = processEnvFor(storage, { PAYMENT_CAPTURE_DELAY_S: '-1', SHIP_DELAY_S: '-1', DELIVER_DELAY_S: '-1' });
  port = await freePort();
  server = await startServer(serverEnv, port);
  apiBase = `http://127.0.0.1:${port}/v2`;
  const created = await runCli(serverEnv, ['api-keys', 'create', '--user', 'admin', '--scopes', 'admin', '--quiet']);
  key = created.stdout.trim();
  expect(key, created.stderr).toMatch(/^sk_test_/);
  configHome = await mkdtemp(path.join(tmpdir(), 'fromagerie-listen-'));
}, 120_000);

afterAll(async () => {
  if (server?.exitCode === null) await stopServer();
  await rm(configHome, { recursive: true, force: true });
  await storage.dispose();
});

/** The CLI's environment: the API and key, and a configuration directory of the test's own. */
function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, FROMAGERIE_API_BASE: apiBase, FROMAGERIE_API_KEY: key, XDG_CONFIG_HOME: configHome, ...extra };
}

async function until(condition: () => boolean, what: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A `listen` process, its output kept line by line. */
function listen(args: string[], env = cliEnv()) {
  return cli(['listen', ...args], env);
}

/** A developer command's process (`listen`, `logs tail`), its output kept line by line. */
function cli(args: string[], env = cliEnv()) {
  const child = spawn(process.execPath, ['bin/fromagerie.js', ...args], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    out: () => stdout,
    err: () => stderr,
    waitFor: (pattern: RegExp, timeoutMs?: number) => until(() => pattern.test(stdout) || pattern.test(stderr), () => `${pattern} in:\n${stdout}\n${stderr}`, timeoutMs),
  };
}

/** `fromagerie trigger <kind>`: the ids of the events it printed, in its order. */
async function trigger(kind: string): Promise<string[]> {
  const outcome = await runCli(cliEnv(), ['trigger', kind]);
  expect(outcome.code, outcome.stderr).toBe(0);
  return [...outcome.stdout.matchAll(/^\S+ (evt_[0-9a-f]{32}) /gm)].map((m) => m[1]!);
}

interface Delivery {
  raw: string;
  headers: http.IncomingHttpHeaders;
}

/** A local receiver on a fixed port that can go down and come back on it. */
class LocalReceiver {
  readonly deliveries: Delivery[] = [];
  #server: http.Server | null = null;
  constructor(readonly port: number) {}

  async up(): Promise<void> {
    this.#server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        this.deliveries.push({ raw, headers: req.headers });
        // Every third event answers 500: an answer all the same, which moves listen on.
        res.writeHead(this.deliveries.length % 3 === 0 ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, '127.0.0.1', resolve));
  }

  async down(): Promise<void> {
    this.#server!.closeAllConnections();
    await new Promise((resolve) => this.#server!.close(resolve));
  }

  ids(): string[] {
    return this.deliveries.map((d) => JSON.parse(d.raw).id as string);
  }
}

describe('fromagerie listen', () => {
  it('forwards every event trigger causes, in order, verified with the printed secret, across a server restart and a receiver down for 5 s', async () => {
    const receiver = new LocalReceiver(await freePort());
    await receiver.up();
    const listener = listen(['--forward-to', String(receiver.port)]);
    try {
      await listener.waitFor(/^Ready/m);
      const secret = /Webhook signing secret: (whsec_\S+)/.exec(listener.out())![1]!;
      const expected: string[] = [];

      expected.push(...(await trigger('order.delivered')));
      expected.push(...(await trigger('cheese.back_in_stock')));
      expect(expected).toHaveLength(7);
      await until(() => receiver.deliveries.length >= expected.length, () => `${expected.length} deliveries, got ${receiver.deliveries.length}`);

      // The server restarts on the same port; listen rides it out and goes on from where it was.
      await stopServer();
      await listener.waitFor(/poll failed/);
      server = await startServer(serverEnv, port);
      expected.push(...(await trigger('order.cancelled')));
      await until(() => receiver.deliveries.length >= expected.length, () => `${expected.length} deliveries after the restart, got ${receiver.deliveries.length}\n${listener.err()}`);

      // The receiver is down for 5 s while events come: retried, none skipped.
      await receiver.down();
      const downAt = Date.now();
      expected.push(...(await trigger('order.shipped')));
      await listener.waitFor(/unreachable/);
      await until(() => Date.now() - downAt >= 5000, () => '5 s');
      await receiver.up();
      await until(() => receiver.deliveries.length >= expected.length, () => `${expected.length} deliveries after the receiver came back, got ${receiver.deliveries.length}`);

      const ids = receiver.ids();
      // In order, each once: exactly the events the triggers printed (the worker is off).
      expect(ids).toEqual(expected);
      for (const delivery of receiver.deliveries) {
        const headers = Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
        expect(() => new Webhook(secret).verify(delivery.raw, headers)).not.toThrow();
        expect(verifyWebhook(delivery.raw, headers, secret).id).toBe(JSON.parse(delivery.raw).id);
      }
      // One line per event and per answer: type, id, status, duration.
      for (const id of expected) {
        expect(listener.out()).toMatch(new RegExp(`^--> \\S+ ${id}$`, 'm'));
        expect(listener.out()).toMatch(new RegExp(`^<-- (204|500) \\S+ ${id} \\d+ ms$`, 'm'));
      }
      listener.child.kill('SIGINT');
      expect(await listener.exited).toBe(0);
    } finally {
      listener.child.kill('SIGKILL');
      await receiver.down().catch(() => undefined);
    }
  }, TIMEOUT_MS);

  it('--resume goes on after the last answered event; events resend forwards one again, signed the same', async () => {
    const receiver = new LocalReceiver(await freePort());
    await receiver.up();
    try {
      const first = listen(['--forward-to', `http://127.0.0.1:${receiver.port}/hooks`, '--events', 'order.*', '--format', 'json']);
      await first.waitFor(/"kind":"ready"/);
      const placed = await trigger('order.placed');
      await until(() => receiver.deliveries.length === 1, () => 'the first delivery');
      await first.waitFor(/"kind":"answer"/);
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(0);
      expect(first.out().split('\n').filter(Boolean).map((line) => JSON.parse(line).kind)).toContain('answer');

      // Events that happen while nobody listens are forwarded by the next --resume, and only those.
      const missed = await trigger('order.confirmed');
      // trigger waits for its kind to be visible (on PostgreSQL, after every older transaction): both events are printed.
      expect(missed).toHaveLength(2);
      const second = listen(['--forward-to', `http://127.0.0.1:${receiver.port}/hooks`, '--events', 'order.*', '--resume']);
      try {
        await until(() => receiver.deliveries.length >= 1 + missed.length, () => `the missed events, got ${receiver.ids().join(' ')}`);
        expect(receiver.ids()).toEqual([...placed, ...missed]);
      } finally {
        second.child.kill('SIGINT');
        expect(await second.exited).toBe(0);
      }

      const secret = (await runCli(cliEnv(), ['listen', '--print-secret'])).stdout.trim();
      const resent = await runCli(cliEnv(), ['events', 'resend', placed[0]!, '--forward-to', `http://127.0.0.1:${receiver.port}/again`]);
      expect(resent.code, resent.stderr).toBe(0);
      expect(resent.stdout).toMatch(new RegExp(`^<-- 204 order.placed ${placed[0]} \\d+ ms`, 'm'));
      const again = receiver.deliveries.at(-1)!;
      expect(again.raw).toBe(receiver.deliveries[0]!.raw);
      const headers = Object.fromEntries(Object.entries(again.headers).map(([k, v]) => [k, String(v)]));
      expect(() => new Webhook(secret).verify(again.raw, headers)).not.toThrow();
    } finally {
      await receiver.down();
    }
  }, TIMEOUT_MS);

  it('--print-secret prints the same secret on every run, kept 0600, the one listen signs with', async () => {
    const [a, b] = await Promise.all([runCli(cliEnv(), ['listen', '--print-secret']), runCli(cliEnv(), ['listen', '--print-secret'])]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}\n$/);
    expect(b.stdout).toBe(a.stdout);
    expect((await stat(path.join(configHome, 'fromagerie', 'listen-secret'))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(configHome, 'fromagerie'))).mode & 0o077).toBe(0);
    // The one listen prints at its start (and signs with: the first test verifies with that one).
    const started = await runCli(cliEnv(), ['listen', '--forward-to', '4242', '--events', 'nope.*']);
    expect(started.stdout).toContain(`Webhook signing secret: ${a.stdout.trim()} `);
  }, TIMEOUT_MS);

  it('exits 2 on usage errors and unknown kinds (before Ready), 3 on a refused key, 4 past retention, 0 on Ctrl-C', async () => {
    // An event id of 60 days ago (its first 12 hex digits are the time): past the 30 days kept.
    const old = `evt_${(Date.now() - 60 * 86_400_000).toString(16).padStart(12, '0')}70008000000000000000`;
    const [unknownKind, noTarget, both, refused, gone] = await Promise.all([
      runCli(cliEnv(), ['listen', '--forward-to', '4242', '--events', 'order.*,cheese.no_such_kind']),
      runCli(cliEnv(), ['listen']),
      runCli(cliEnv(), ['listen', '--forward-to', '4242', '--resume', '--after', 'now']),
      runCli(cliEnv({ FROMAGERIE_API_KEY: 'sk_test_no_such_key_000000000000000000000000000' }), ['listen', '--forward-to', '4242']),
      runCli(cliEnv(), ['listen', '--forward-to', '4242', '--after', old]),
    ]);
    expect([unknownKind.code, noTarget.code, both.code, refused.code, gone.code], [unknownKind, noTarget, both, refused, gone].map((o) => o.stderr).join('\n')).toEqual([2, 2, 2, 3, 4]);
    expect(unknownKind.stderr).toContain('cheese.no_such_kind');
    expect(unknownKind.stdout).not.toContain('Ready');
    expect(gone.stderr).toMatch(/retention/);

    // Which modules the process loaded (a resolve hook prints each): neither a driver nor the server's configuration or database layer.
    const hook = `export async function resolve(s, c, n) { const r = await n(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }`;
    const traced = await new Promise<string>((resolve) => {
      const tracing = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
      execFile(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(tracing)}`, 'bin/fromagerie.js', 'listen', '--forward-to', '4242', '--events', 'nope.*'], { env: cliEnv(), timeout: 60_000 }, (_, __, stderr) => resolve(stderr));
    });
    const loaded = [...traced.matchAll(/^LOADED (\S+)$/gm)].map((m) => m[1]!);
    expect(loaded.some((url) => url.includes('src/cli/dev/listen.ts') || url.includes('dist/cli/dev/listen.js')), traced).toBe(true);
    expect(loaded.filter((url) => /better-sqlite3|\/node_modules\/pg|kysely|\/(src|dist)\/(db|config)\/|\/(src|dist)\/(modules|config)\.(ts|js)$/.test(url))).toEqual([]);

    const idle = listen(['--forward-to', '4242']);
    await idle.waitFor(/^Ready/m);
    idle.child.kill('SIGINT');
    expect(await idle.exited).toBe(0);
  }, TIMEOUT_MS);
});

describe('fromagerie logs tail', () => {
  it('prints each request the filters keep, one line each, soon after its answer; exits 2 on bad filters, 3 on a refused key, 0 on Ctrl-C', async () => {
    const tail = cli(['logs', 'tail', '--status', '404']);
    await tail.waitFor(/^Ready/m);
    const headers = { authorization: `Bearer ${key}` };
    expect((await fetch(`${apiBase}/cheeses?limit=1`, { headers: { ...headers, 'x-request-id': 'tail-cli-200' } })).status).toBe(200);
    const missing = await fetch(`${apiBase}/orders/987654321`, { headers: { ...headers, 'x-request-id': 'tail-cli-404' } });
    expect(missing.status).toBe(404);
    const answeredAt = performance.now();
    await tail.waitFor(/tail-cli-404/, 10_000);
    process.stdout.write(`logs tail printed the 404 ${Math.round(performance.now() - answeredAt)} ms after its answer\n`);
    const line = tail.out().split('\n').find((l) => l.includes('tail-cli-404'))!;
    expect(line).toMatch(/ 404 GET +\/v2\/orders\/987654321 +\d+ ms +sk_test_\S+ +tail-cli-404$/);
    expect(tail.out()).not.toContain('tail-cli-200');
    tail.child.kill('SIGINT');
    expect(await tail.exited).toBe(0);

    const json = cli(['logs', 'tail', '--method', 'delete', '--format', 'json']);
    await json.waitFor(/"kind":"ready"/);
    await fetch(`${apiBase}/webhooks/987654321`, { method: 'DELETE', headers: { ...headers, 'x-request-id': 'tail-cli-delete' } });
    await json.waitFor(/tail-cli-delete/, 10_000);
    const entry = JSON.parse(json.out().split('\n').find((l) => l.includes('tail-cli-delete'))!);
    expect(entry).toMatchObject({ kind: 'request', requestId: 'tail-cli-delete', method: 'DELETE', status: 404, request: { headers: { authorization: '[redacted]' } } });
    json.child.kill('SIGINT');
    expect(await json.exited).toBe(0);

    const badStatus = cli(['logs', 'tail', '--status', '6xx']);
    expect(await badStatus.exited).toBe(2);
    const refused = cli(['logs', 'tail'], cliEnv({ FROMAGERIE_API_KEY: 'sk_test_notakeynotakeynotakeynotakey0000000000000' }));
    expect(await refused.exited).toBe(3);
  }, TIMEOUT_MS);
});
