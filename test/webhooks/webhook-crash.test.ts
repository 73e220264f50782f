import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { startServer } from '../helpers/server.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * The server is killed (SIGKILL) while events are committed and delivered, with a backlog
 * of deliveries in flight, then started again: every event that committed reaches the
 * receiver at least once.
 */
const run = promisify(execFile);
let storage: TestStorage;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;
let receiver: Receiver;

const start = (port: number) => startServer(env, port);

beforeAll(async () => {
  storage = await createTestStorage();
  receiver = await new Receiver().start();
  // Every answer takes 100 ms and the endpoint takes 8 at a time: cheeses are created faster
  // than they are delivered, so the kill finds attempts in flight and a queue behind them.
  receiver.on('/crash', () => ({ status: 200, delayMs: 100 }));
  env = processEnvFor(storage, { ADMIN_PASSWORD: 'crash test staff password', RATE_LIMITS: 'off', MAX_CONNECTIONS_PER_CLIENT: '0', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_SCHEDULE_S: '0,0.2,0.4,0.8,1.6,3.2', WEBHOOK_ENDPOINT_CONCURRENCY: '8' });
});
afterAll(async () => {
  server?.kill('SIGKILL');
  await receiver.close();
  await storage.dispose();
});

describe('a crash while webhooks are delivered', () => {
  it('delivers every committed event at least once after the restart', async () => {
    const port = await freePort();
    server = await start(port);
    const base = `http://127.0.0.1:${port}/v2`;
    const key = (await run(process.execPath, ['bin/fromagerie.js', 'api-keys', 'create', '--user', 'admin', '--scopes', 'admin', '--quiet'], { env })).stdout.trim();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const registered = await fetch(`${base}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url('/crash'), events: ['cheese.new_arrival'] }) });
    expect(registered.status).toBe(201);

    let creating = true;
    let n = 0;
    const createLoop = async () => {
      while (creating) {
        try {
          await fetch(`${base}/cheeses`, { method: 'POST', headers, body: JSON.stringify({ name: `Crash cheese ${++n}`, pricePerKg: 20, stockQuantityKg: 10 }) });
        } catch {
          // the server is gone
        }
      }
    };
    const loops = Array.from({ length: 4 }, createLoop);
    await receiver.waitFor('/crash', 20, 60_000);
    server.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    creating = false;
    await Promise.all(loops);

    const database = openDatabase({ ...loadConfig(env), poolSize: 2 });
    const { db } = database;
    const committed = async () =>
      (await db.selectFrom('outbox').select(['event_id']).where('type', '=', 'cheese.new_arrival').where('data', 'like', '%Crash cheese%').execute()).map((row) => row.event_id);
    try {
      const events = await committed();
      const receivedIds = () => new Set(receiver.at('/crash').map((r) => String(r.headers['webhook-id'])));
      // The crash caught deliveries midway: committed events had not reached the receiver yet.
      expect(events.filter((id) => !receivedIds().has(id)).length).toBeGreaterThan(0);

      server = await start(port);
      const deadline = Date.now() + 90_000;
      while (events.some((id) => !receivedIds().has(id))) {
        if (Date.now() > deadline) throw new Error(`${events.filter((id) => !receivedIds().has(id)).length} of ${events.length} events never arrived after the restart`);
        await new Promise((r) => setTimeout(r, 100));
      }
      server.kill('SIGTERM');
      // Nothing but committed events was sent, and each has exactly one delivery.
      expect([...receivedIds()].filter((id) => !events.includes(id))).toEqual([]);
      const deliveries = await db.selectFrom('webhook_deliveries').select(['event_id']).where('event_id', 'in', events).execute();
      expect(deliveries.map((d) => d.event_id).sort()).toEqual([...events].sort());
    } finally {
      await database.close();
    }
  }, 240_000);
});
