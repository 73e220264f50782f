import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, byte for byte, as a signature is computed over it. */
  raw: string;
  at: number;
}

/** What to answer to the n-th request (1-based) on a path: a status, and optionally headers, a delay, or no answer at all. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  hang?: boolean;
}
export type Behaviour = (n: number, request: Received) => Answer;

/** A real webhook receiver on loopback that records every request. */
export class Receiver {
  readonly received: Received[] = [];
  readonly #behaviours = new Map<string, Behaviour>();
  readonly #counts = new Map<string, number>();
  readonly #server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: Received = { path: req.url ?? '/', headers: req.headers, raw: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      this.received.push(entry);
      const n = (this.#counts.get(entry.path) ?? 0) + 1;
      this.#counts.set(entry.path, n);
      const behaviour: Behaviour = this.#behaviours.get(entry.path) ?? (() => ({ status: 200 }));
      const answer = behaviour(n, entry);
      if (answer.hang) return;
      setTimeout(() => res.writeHead(answer.status, answer.headers).end('ok'), answer.delayMs ?? 0);
    });
  });
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, behaviour: Behaviour): void {
    this.#behaviours.set(path, behaviour);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `path` has received `count` requests (or fails after `timeoutMs`). */
  async waitFor(path: string, count: number, timeoutMs = 10_000): Promise<Received[]> {
    const until = Date.now() + timeoutMs;
    while (this.at(path).length < count) {
      if (Date.now() > until) throw new Error(`${path} received ${this.at(path).length} of ${count} requests within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.at(path);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
