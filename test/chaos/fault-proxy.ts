import net from 'node:net';

/**
 * A TCP proxy between one instance and PostgreSQL or Redis whose behaviour changes at runtime
 * (toxiproxy and `tc netem` are not available here):
 * - `pass`: bytes flow both ways untouched;
 * - `latency`: each chunk, either way, is held `ms` before it is forwarded (order kept);
 * - `blackhole`: connections are accepted and read, nothing is forwarded nor answered (a
 *   network partition that drops packets: the client only learns of it by its own timeouts);
 * - `reset`: every connection, open or new, is destroyed with a TCP RST;
 * - `refuse`: the listener is closed (connection refused), open connections are reset.
 */
export type FaultMode = { kind: 'pass' } | { kind: 'latency'; ms: number } | { kind: 'blackhole' } | { kind: 'reset' } | { kind: 'refuse' };

/** One direction of a connection: chunks wait their turn here while latency is on, so their order holds. */
interface Pipe {
  to: net.Socket;
  queue: { chunk: Buffer; due: number }[];
  timer: NodeJS.Timeout | undefined;
}

interface Link {
  client: net.Socket;
  upstream: net.Socket;
  up: Pipe;
  down: Pipe;
  /** Bytes were dropped by a black hole: the protocol stream is broken for good. */
  holed: boolean;
}

export class FaultProxy {
  #mode: FaultMode = { kind: 'pass' };
  #server: net.Server | undefined;
  readonly #links = new Set<Link>();
  port = 0;

  constructor(
    readonly name: string,
    private readonly upstreamPort: number,
    private readonly upstreamHost = '127.0.0.1',
  ) {}

  get mode(): FaultMode {
    return this.#mode;
  }

  async start(port = 0): Promise<this> {
    const server = net.createServer((client) => this.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.#server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this;
  }

  /** Switches the mode for new and open connections. */
  async set(mode: FaultMode): Promise<void> {
    const previous = this.#mode;
    this.#mode = mode;
    if (mode.kind === 'reset' || mode.kind === 'refuse') for (const link of [...this.#links]) this.#reset(link);
    // Leaving a black hole: a connection that lost bytes cannot carry its protocol any more
    // (a query sent into the hole is never answered); it is reset, as TCP gives up on it.
    if (previous.kind === 'blackhole' && mode.kind !== 'blackhole') for (const link of [...this.#links]) if (link.holed) this.#reset(link);
    if (mode.kind === 'refuse' && this.#server) {
      const server = this.#server;
      this.#server = undefined;
      await new Promise((resolve) => server.close(resolve));
    }
    if (previous.kind === 'refuse' && mode.kind !== 'refuse') await this.start(this.port);
  }

  /** Connections open now (through the proxy). */
  get openConnections(): number {
    return this.#links.size;
  }

  async close(): Promise<void> {
    for (const link of [...this.#links]) this.#reset(link);
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  #accept(client: net.Socket): void {
    client.on('error', () => undefined);
    if (this.#mode.kind === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(this.upstreamPort, this.upstreamHost);
    const link: Link = { client, upstream, up: { to: upstream, queue: [], timer: undefined }, down: { to: client, queue: [], timer: undefined }, holed: false };
    this.#links.add(link);
    // One side going away takes the other with it, the way it would through a router.
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => undefined);
    upstream.on('error', () => (client.destroyed ? undefined : client.resetAndDestroy()));
    client.on('close', () => {
      this.#drop(link);
      upstream.destroy();
    });
    upstream.on('close', () => {
      this.#drop(link);
      if (!client.destroyed) client.end();
    });
    client.on('data', (chunk: Buffer) => this.#forward(link, link.up, chunk));
    upstream.on('data', (chunk: Buffer) => this.#forward(link, link.down, chunk));
  }

  #forward(link: Link, pipe: Pipe, chunk: Buffer): void {
    const mode = this.#mode;
    if (mode.kind === 'blackhole') {
      link.holed = true; // read and dropped
      return;
    }
    if (mode.kind === 'reset' || mode.kind === 'refuse') {
      this.#reset(link);
      return;
    }
    if (mode.kind === 'pass' && pipe.queue.length === 0) {
      pipe.to.write(chunk);
      return;
    }
    pipe.queue.push({ chunk, due: Date.now() + (mode.kind === 'latency' ? mode.ms : 0) });
    this.#pump(pipe);
  }

  /** Sends the chunks of a pipe whose time has come, in order, and waits for the next one. */
  #pump(pipe: Pipe): void {
    if (pipe.timer) return;
    while (pipe.queue.length > 0 && pipe.queue[0]!.due <= Date.now()) {
      const { chunk } = pipe.queue.shift()!;
      if (!pipe.to.destroyed) pipe.to.write(chunk);
    }
    if (pipe.queue.length === 0) return;
    pipe.timer = setTimeout(() => {
      pipe.timer = undefined;
      this.#pump(pipe);
    }, pipe.queue[0]!.due - Date.now());
  }

  #drop(link: Link): void {
    this.#links.delete(link);
    for (const pipe of [link.up, link.down]) {
      clearTimeout(pipe.timer);
      pipe.timer = undefined;
      pipe.queue.length = 0;
    }
  }

  #reset(link: Link): void {
    this.#drop(link);
    if (!link.client.destroyed) link.client.resetAndDestroy();
    if (!link.upstream.destroyed) link.upstream.resetAndDestroy();
  }
}
