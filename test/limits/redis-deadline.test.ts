import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { DeadlineExceeded, withinDeadline } from '../../src/kernel/deadline.js';
import type { BucketSpec } from '../../src/modules/limits/bucket.rules.js';
import { SharedOrLocalStore } from '../../src/modules/limits/bucket.store.js';
import { RedisBucketStore, REDIS_DEADLINE_MS } from '../../src/modules/limits/redis.store.js';

/**
 * A busy process is not a dead Redis: when the event loop is held up past the deadline while the
 * answer sits unread in the socket, the answer wins (the fault suite saw a restarted instance,
 * starved of CPU, count an account's limit on its own buckets for 5 s while Redis was up).
 */
function holdEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else runs, as on a starved instance
  }
}

/** A TCP peer on 127.0.0.1 that reads and never answers. */
async function silentPeer(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.resume());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** An echo peer in a process of its own, so it answers while this one is busy. */
async function outsidePeer(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', "require('net').createServer((s) => s.on('data', (d) => s.write(d))).listen(0, '127.0.0.1', function () { console.log(this.address().port) })"]);
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, port: Number(line.toString().trim()) };
}

async function connected(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

function ask(socket: Socket): Promise<string> {
  const answer = once(socket, 'data').then(([data]) => String(data));
  socket.write('ping\n');
  return answer;
}

const servers: Server[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  servers.forEach((server) => server.close());
  children.forEach((child) => child.kill());
});

describe('withinDeadline', () => {
  it('an answer that arrived while the event loop was held past the deadline is taken', async () => {
    const { child, port } = await outsidePeer();
    children.push(child);
    const socket = await connected(port);
    // The question leaves at once; the answer comes back while this process is busy.
    const answer = withinDeadline(ask(socket), 50);
    holdEventLoop(300);
    await expect(answer).resolves.toBe('ping\n');
    socket.destroy();
  });

  it('a peer that never answers is refused with DeadlineExceeded', async () => {
    const { server, port } = await silentPeer();
    servers.push(server);
    const socket = await connected(port);
    await expect(withinDeadline(ask(socket), 50)).rejects.toBeInstanceOf(DeadlineExceeded);
    socket.destroy();
  });

  it("passes the answer's own failure through", async () => {
    await expect(withinDeadline(Promise.reject(new Error('refused')), 50)).rejects.toThrow('refused');
  });
});

const REDIS = process.env.TEST_REDIS_URL;
/** Ten tokens that do not refill within a test. */
const SPEC: BucketSpec = { name: 'test', capacity: 10, refillPerSecond: 0.001, quota: 10, windowSeconds: 10_000 };
describe.skipIf(!REDIS)('rate limits in Redis on a starved instance', () => {
  it('a check whose answer waited behind a held event loop counts in Redis, not on local buckets', async () => {
    const redis = new RedisBucketStore(REDIS!, `test-deadline-${randomUUID()}:`);
    const store = new SharedOrLocalStore(redis, () => undefined);
    try {
      await redis.ready();
      const spec = [SPEC];
      expect(await store.take(['account'], spec)).toMatchObject({ allowed: true });
      const pending = store.take(['account'], spec);
      holdEventLoop(REDIS_DEADLINE_MS + 300);
      const taken = await pending;
      expect(store.counts.fallbacks).toBe(0);
      // The shared bucket saw both takes: a local one would have started full (9 left).
      expect(Math.floor(taken.tokens[0]!)).toBe(8);
      expect(Math.floor((await store.take(['account'], spec)).tokens[0]!)).toBe(7);
    } finally {
      await redis.close();
    }
  });
});

describe.skipIf(!REDIS)('rate limits when Redis fails after answering', () => {
  it('the local buckets go on from what Redis last said, not from full', async () => {
    const redis = new RedisBucketStore(REDIS!, `test-deadline-${randomUUID()}:`);
    const store = new SharedOrLocalStore(redis, () => undefined);
    const spec = [SPEC];
    await redis.ready();
    for (let i = 0; i < 4; i++) await store.take(['account'], spec);
    await redis.close();
    const local = await store.take(['account'], spec);
    expect(store.counts.fallbacks).toBe(1);
    expect(Math.floor(local.tokens[0]!)).toBe(5);
  });
});
