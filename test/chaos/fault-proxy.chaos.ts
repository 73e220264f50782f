import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy } from './fault-proxy.js';

/** The fault proxy itself, against an echo server: each mode does what the scenarios rely on. */
describe('the fault proxy', () => {
  let echo: net.Server;
  let proxy: FaultProxy;

  beforeAll(async () => {
    echo = net.createServer((socket) => {
      socket.on('error', () => undefined); // the proxy resets it
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    proxy = await new FaultProxy('echo', (echo.address() as net.AddressInfo).port).start();
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => echo.close(resolve));
  });

  /** Connects, sends `text`, and resolves with what came back within `waitMs`, or the error. */
  const roundTrip = (text: string, waitMs = 1_000) =>
    new Promise<{ reply?: string; error?: string; ms: number }>((resolve) => {
      const started = Date.now();
      const socket = net.connect(proxy.port, '127.0.0.1');
      let reply = '';
      const done = (result: { reply?: string; error?: string }) => {
        clearTimeout(timer);
        socket.destroy();
        resolve({ ...result, ms: Date.now() - started });
      };
      const timer = setTimeout(() => done({ reply: reply || undefined }), waitMs);
      socket.on('connect', () => socket.write(text));
      socket.on('data', (chunk) => {
        reply += chunk.toString();
        if (reply === text) done({ reply });
      });
      socket.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code }));
    });

  it('passes bytes through, delays them, swallows them, resets and refuses, and recovers', async () => {
    expect((await roundTrip('hello')).reply).toBe('hello');

    await proxy.set({ kind: 'latency', ms: 150 });
    const slow = await roundTrip('slow');
    expect(slow.reply).toBe('slow');
    expect(slow.ms).toBeGreaterThanOrEqual(300); // 150 ms each way

    await proxy.set({ kind: 'blackhole' });
    const swallowed = await roundTrip('lost', 600);
    expect([swallowed.reply, swallowed.error]).toEqual([undefined, undefined]);

    await proxy.set({ kind: 'reset' });
    expect((await roundTrip('reset')).error).toBe('ECONNRESET');

    await proxy.set({ kind: 'refuse' });
    expect((await roundTrip('refused')).error).toBe('ECONNREFUSED');

    await proxy.set({ kind: 'pass' });
    expect((await roundTrip('back')).reply).toBe('back');
  });

  it('resets open connections when switched to reset', async () => {
    const socket = net.connect(proxy.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = new Promise<string | undefined>((resolve) => {
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
      socket.once('close', () => resolve(undefined));
    });
    await new Promise((r) => setTimeout(r, 50));
    await proxy.set({ kind: 'reset' });
    expect(await closed).toBe('ECONNRESET');
    await proxy.set({ kind: 'pass' });
  });
});
