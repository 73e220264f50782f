import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as OTLP/HTTP JSON carries it, flattened: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number };
  resource: Record<string, unknown>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

const plain = (attributes: OtlpAttribute[] = []): Record<string, unknown> =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue))]));

/** A local OTLP/HTTP (JSON) collector: POST /v1/traces, every span kept. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly #server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
        };
        for (const resourceSpans of body.resourceSpans ?? []) {
          const resource = plain(resourceSpans.resource?.attributes);
          for (const scope of resourceSpans.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              this.spans.push({
                traceId: span.traceId as string,
                spanId: span.spanId as string,
                parentSpanId: (span.parentSpanId as string | undefined) || undefined,
                name: span.name as string,
                kind: span.kind as number,
                attributes: plain(span.attributes as OtlpAttribute[]),
                status: (span.status as { code?: number }) ?? {},
                resource,
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  get endpoint(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
