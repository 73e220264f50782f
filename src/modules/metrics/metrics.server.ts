import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsSource {
  text(): Promise<string>;
  contentType: string;
}

export interface MetricsServer {
  address: AddressInfo;
  close(): Promise<void>;
}

/** A scrape that takes longer than this is answered 503 (the backlog gauges wait at most 1 s). */
const SCRAPE_TIMEOUT_MS = 5000;

/**
 * `GET /metrics` on a port of its own (METRICS_PORT, loopback unless METRICS_HOST says
 * otherwise): a plain node:http server, so that nothing of the public app (its hooks, rate
 * limits, authentication, logging) applies to it, and the public port never serves it.
 * Anything else is 404; only GET and HEAD are answered.
 */
export async function startMetricsServer(metrics: MetricsSource, options: { port: number; host: string }): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') return plain(response, 404, 'Not found: the metrics are at /metrics.\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return plain(response, 405, 'Only GET and HEAD.\n');
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('scrape timed out')), SCRAPE_TIMEOUT_MS)));
    Promise.race([metrics.text(), late])
      .then((text) => {
        response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      })
      .catch((error: unknown) => plain(response, 503, `Metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`))
      .finally(() => clearTimeout(timer));
  });
  // A slow client cannot hold a connection open.
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function plain(response: http.ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(text);
}

export const DEFAULT_METRICS_PORT = 9464;
export const DEFAULT_METRICS_HOST = '127.0.0.1';

interface Log {
  info(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}

/**
 * The server's metrics endpoint, as configured: none when the port is 0. A port that cannot
 * be bound (taken by another instance on this machine) is logged as an error and the
 * instance serves without metrics: losing the scrape must not take the API down with it.
 */
/** What became of the metrics port: served (the server), off (METRICS_PORT=0), or refused (why, in words the start-up banner prints). */
export type MetricsOutcome = { server: MetricsServer } | { off: true } | { failure: string };

export async function serveMetrics(metrics: MetricsSource, options: { port?: number | undefined; host?: string | undefined; log: Log }): Promise<MetricsOutcome> {
  const port = options.port ?? DEFAULT_METRICS_PORT;
  const host = options.host ?? DEFAULT_METRICS_HOST;
  if (port === 0) return { off: true };
  try {
    const server = await startMetricsServer(metrics, { port, host });
    options.log.info({ address: server.address.address, port: server.address.port }, 'metrics served at /metrics');
    return { server };
  } catch (err) {
    // One line an operator can act on; a stack would say nothing more about a port in use.
    const reason = (err as { code?: string }).code ?? (err as Error).message;
    const failure = `could not listen on ${host}:${port} (${reason}): serving without /metrics; set METRICS_PORT to a free port, or 0`;
    options.log.error({ host, port, reason }, `the metrics server ${failure}`);
    return { failure };
  }
}
