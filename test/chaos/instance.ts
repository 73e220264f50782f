import http from 'node:http';
import { alive, killAndWait, outputOf, signalGroup, startProcess, type Managed } from './processes.js';

/** Start-up under load on 2 cores: tsx compiling the app for three instances at once. */
const START_TIMEOUT_MS = 60_000;

/** One GET with a deadline, no keep-alive: for probes and direct reads of one instance. */
export function getOnce(url: string, headers: Record<string, string> = {}, timeoutMs = 2_000): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

/** The real server (`node --import tsx src/server.ts`) on a fixed port, which it keeps across restarts. */
export class Instance {
  process: Managed | undefined;
  /** Every process this instance has been, for the failure report. */
  readonly lives: Managed[] = [];
  /** Lives ended on purpose (kill -9, SIGTERM): any other exit is the instance's own doing. */
  readonly #ended = new Set<Managed>();

  constructor(
    readonly name: string,
    readonly port: number,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.process !== undefined && alive(this.process);
  }

  /** Spawns it; `ready()` waits for it to serve. */
  spawn(): void {
    this.process = startProcess(this.name, process.execPath, ['--import', 'tsx', 'src/server.ts'], { ...this.env, PORT: String(this.port) });
    this.lives.push(this.process);
  }

  /** Resolves once `/v2/health/ready` answers 200; throws with its output if it exits or takes too long. */
  async ready(timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`${this.name} exited before it was ready:\n${this.output()}`);
      const status = await getOnce(`${this.base}/v2/health/ready`, {}, 1_000).then((r) => r.status, () => 0);
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`${this.name} was not ready within ${timeoutMs} ms:\n${this.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async start(): Promise<void> {
    this.spawn();
    await this.ready();
  }

  kill9(): Promise<void> {
    if (!this.process) return Promise.resolve();
    this.#ended.add(this.process);
    return killAndWait(this.process);
  }

  /** SIGTERM to the server alone; resolves with how it exited. */
  async sigterm(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.process) throw new Error(`${this.name} is not running`);
    this.#ended.add(this.process);
    signalGroup(this.process, 'SIGTERM');
    return this.process.exited;
  }

  /** Exits nobody asked for (not our kill -9 or SIGTERM): how each ended. */
  unexpectedExits(): string[] {
    return this.lives.filter((life) => !alive(life) && !this.#ended.has(life)).map((life) => `${this.name} exited by itself (${life.child.signalCode ?? `code ${life.child.exitCode}`})`);
  }

  output(lastChars = 6000): string {
    return this.lives.map((life, i) => `--- ${this.name} (life ${i + 1}) ---\n${outputOf(life, lastChars)}`).join('\n');
  }
}
