/**
 * Traces (docs/operations.md, "Traces"): the port every seam calls. It names no OpenTelemetry
 * type, so an instance without OTEL_EXPORTER_OTLP_ENDPOINT loads none of it: `noTracing`
 * answers every call at the cost of a function call, and the OpenTelemetry implementation
 * (opentelemetry.ts) is loaded by `startTracing` (start-tracing.ts) alone, with a dynamic import,
 * when asked for.
 */

export type SpanKind = 'internal' | 'server' | 'client';
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What a running span lets its work add once it knows (a status code, a row count). */
export interface ActiveSpan {
  set(attributes: SpanAttributes): void;
  /** Marks the span failed (5xx, a thrown error) without ending it. */
  fail(message?: string): void;
}

export interface TraceIds {
  traceId: string;
  spanId: string;
}

/** A request's SERVER span: entered at onRequest, ended once answered (or abandoned). */
export interface RequestSpan extends ActiveSpan, TraceIds {
  /** Makes this span the current one for the rest of the request's work (AsyncLocalStorage.enterWith). */
  enter(): void;
  end(attributes?: SpanAttributes): void;
}

export interface IncomingRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Runs `work` in a child of the current span (a root when none), ended when it settles; failed if it throws. */
  inSpan<T>(name: string, attributes: SpanAttributes, work: (span: ActiveSpan) => Promise<T>, kind?: SpanKind): Promise<T>;
  /** Runs `work` in a new trace: background work (a job's run, a webhook delivery), whatever woke it. */
  inRootSpan<T>(name: string, attributes: SpanAttributes, work: (span: ActiveSpan) => Promise<T>): Promise<T>;
  /** A SERVER span continuing the request's W3C `traceparent` when it has one. */
  startRequestSpan(request: IncomingRequest): RequestSpan | undefined;
  /** The current span's ids, for log lines and the request log. */
  traceIds(): TraceIds | undefined;
  /** Adds `traceparent` (and `tracestate`) for the current span to outgoing headers. */
  inject(headers: Record<string, string>): void;
  /** Exports what is buffered and stops; bounded, so a dead collector never holds up an exit. */
  shutdown(): Promise<void>;
}

const noSpan: ActiveSpan = { set: () => undefined, fail: () => undefined };

export const noTracing: Tracing = {
  enabled: false,
  inSpan: (_name, _attributes, work) => work(noSpan),
  inRootSpan: (_name, _attributes, work) => work(noSpan),
  startRequestSpan: () => undefined,
  traceIds: () => undefined,
  inject: () => undefined,
  shutdown: async () => undefined,
};

export interface TracedService {
  serviceName: string;
  serviceVersion: string;
  instanceId?: string;
}
