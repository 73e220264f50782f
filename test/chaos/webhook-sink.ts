import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One webhook request as the receiver saw it: from its arrival to the answer sent. */
export interface SinkRequest {
  eventId: string;
  attempt: number;
  arrivedAt: number;
  answeredAt: number | undefined;
  status: number;
}

/**
 * A webhook receiver that can be turned down (its port closed: connections refused) and up
 * again on the same port, which test/helpers/receiver.ts cannot (it listens on a new random
 * port each start). It holds each answer `answerDelayMs`, so two attempts of one delivery in
 * flight at once would overlap here, where they can be seen.
 */
export class WebhookSink {
  readonly requests: SinkRequest[] = [];
  #server: http.Server | undefined;
  port = 0;

  constructor(private readonly answerDelayMs = 50) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks/chaos`;
  }

  get up(): boolean {
    return this.#server !== undefined;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const entry: SinkRequest = {
        eventId: String(req.headers['webhook-id'] ?? req.headers['x-cheese-event-id'] ?? ''),
        attempt: Number(req.headers['x-cheese-delivery-attempt'] ?? 0),
        arrivedAt: Date.now(),
        answeredAt: undefined,
        status: 200,
      };
      this.requests.push(entry);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          entry.answeredAt = Date.now();
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        }, this.answerDelayMs),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Down: the port refuses connections; requests being answered are cut. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Event ids received at least once with a 200 sent. */
  delivered(): Set<string> {
    return new Set(this.requests.filter((r) => r.answeredAt !== undefined).map((r) => r.eventId));
  }

  /** Pairs of requests for one event in flight at once (the second arrived before the first was answered). */
  overlaps(): { eventId: string; first: SinkRequest; second: SinkRequest }[] {
    const byEvent = new Map<string, SinkRequest[]>();
    for (const r of this.requests) byEvent.set(r.eventId, [...(byEvent.get(r.eventId) ?? []), r]);
    const found: { eventId: string; first: SinkRequest; second: SinkRequest }[] = [];
    for (const [eventId, list] of byEvent) {
      for (let i = 1; i < list.length; i++) {
        const first = list[i - 1]!;
        const second = list[i]!;
        if (second.arrivedAt < (first.answeredAt ?? Number.POSITIVE_INFINITY) && first.answeredAt !== undefined) found.push({ eventId, first, second });
      }
    }
    return found;
  }
}
