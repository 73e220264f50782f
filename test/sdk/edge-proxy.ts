import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Header names as sent, one entry per line (a header sent twice appears twice). */
  names: string[];
  /** The status the server answered, when the request was passed on. */
  status?: number;
}

/**
 * What the edge does with the n-th request (1-based): pass it on, answer it itself, pass it on
 * and then cut the connection before the client reads the answer (the server did the work,
 * the client never learns it), cut it at once, or never answer.
 */
export type Fault = 'forward' | 'drop-answer' | 'reset' | 'hang' | { status: number; headers?: Record<string, string> };

/** A real HTTP hop in front of the app, where the network fails: the SDK is tested against faults at the true edge, not a stub of our code. */
export class EdgeProxy {
  readonly seen: Seen[] = [];
  fault: (n: number, seen: Seen) => Fault = () => 'forward';
  readonly #server: http.Server;
  port = 0;

  constructor(private readonly target: string) {
    this.#server = http.createServer((req, res) => {
      const names: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) names.push(req.rawHeaders[i]!.toLowerCase());
      const seen: Seen = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, names };
      this.seen.push(seen);
      const fault = this.fault(this.seen.length, seen);
      if (fault === 'reset') return void req.socket.destroy();
      if (fault === 'hang') return void req.resume();
      if (typeof fault === 'object') {
        req.resume();
        return void res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers }).end(JSON.stringify({ code: fault.status, type: fault.status === 429 ? 'rate_limited' : 'service_unavailable', message: 'The edge says no.' }));
      }
      const upstream = http.request(new URL(seen.path, this.target), { method: seen.method, headers: req.headers }, (answer) => {
        if (fault === 'drop-answer') {
          // Read the whole answer, so the server has finished, then cut the client off.
          answer.resume();
          return void answer.on('end', () => req.socket.destroy());
        }
        seen.status = answer.statusCode ?? 502;
        res.writeHead(seen.status, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => req.socket.destroy());
      req.pipe(upstream);
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v2`;
  }

  reset(): void {
    this.seen.length = 0;
    this.fault = () => 'forward';
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
