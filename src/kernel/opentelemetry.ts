import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind as OtelKind, SpanStatusCode, trace, type Context, type ContextManager, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { ActiveSpan, RequestSpan, SpanAttributes, SpanKind, TracedService, Tracing } from './tracing.js';

/**
 * The OpenTelemetry side of the tracing port, loaded only by `startTracing` (a dynamic import)
 * when an OTLP endpoint is set. Spans go out in batches over OTLP/HTTP JSON to the URL the
 * configuration names, with its headers (OTEL_EXPORTER_OTLP_HEADERS, validated by src/config).
 */

/** Spans wait at most this long before they are sent: a trace shows up within a second or two. */
const EXPORT_DELAY_MS = 1000;
/** Shutdown's last export: a collector that does not answer never holds the exit longer. */
const SHUTDOWN_TIMEOUT_MS = 3000;

const KINDS: Record<SpanKind, OtelKind> = { internal: OtelKind.INTERNAL, server: OtelKind.SERVER, client: OtelKind.CLIENT };

/**
 * AsyncLocalStorage as OpenTelemetry's context manager, plus `enter`: Fastify runs a request's
 * later hooks and handler from callbacks (the body's stream events among them) that a
 * `context.with` around one hook does not reach; entering the context on the request's own
 * async resource at its first hook does (AsyncLocalStorage.enterWith).
 */
class RequestContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(context, () => fn(...args))) as T;
  }

  enter(context: Context): void {
    this.#storage.enterWith(context);
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}

function clean(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

function handle(span: Span): ActiveSpan {
  return {
    set: (attributes) => span.setAttributes(clean(attributes)),
    fail: (message) => span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) }),
  };
}

export function openTelemetryTracing(service: TracedService, exporter: { url: string; headers: Record<string, string> }): Tracing {
  const contexts = new RequestContextManager();
  const propagator = new W3CTraceContextPropagator();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': service.serviceName,
      'service.version': service.serviceVersion,
      // One per process: tells apart the instances of one deployment.
      'service.instance.id': service.instanceId ?? randomUUID(),
    }),
    // A caller's sampling decision (its traceparent's flag) is kept; a trace started here is sampled.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(exporter), scheduledDelayMillis: EXPORT_DELAY_MS })],
  });
  const tracer = provider.getTracer('fromagerie', service.serviceVersion);
  const headerGetter = {
    keys: (carrier: Record<string, string | string[] | undefined>) => Object.keys(carrier),
    get: (carrier: Record<string, string | string[] | undefined>, key: string) => carrier[key],
  };
  const headerSetter = { set: (carrier: Record<string, string>, key: string, value: string) => (carrier[key] = value) };

  async function run<T>(parent: Context, name: string, attributes: SpanAttributes, work: (span: ActiveSpan) => Promise<T>, kind: SpanKind): Promise<T> {
    const span = tracer.startSpan(name, { kind: KINDS[kind], attributes: clean(attributes) }, parent);
    try {
      return await contexts.with(trace.setSpan(parent, span), () => work(handle(span)));
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  }

  return {
    enabled: true,
    inSpan: (name, attributes, work, kind = 'internal') => run(contexts.active(), name, attributes, work, kind),
    inRootSpan: (name, attributes, work) => run(ROOT_CONTEXT, name, attributes, work, 'internal'),
    startRequestSpan(request) {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
      const span = tracer.startSpan(
        request.method,
        { kind: OtelKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': request.path } },
        parent,
      );
      const context = trace.setSpan(parent, span);
      const { traceId, spanId } = span.spanContext();
      const requestSpan: RequestSpan = {
        traceId,
        spanId,
        ...handle(span),
        enter: () => contexts.enter(context),
        end(attributes = {}) {
          const route = attributes['http.route'];
          if (typeof route === 'string') span.updateName(`${request.method} ${route}`);
          span.setAttributes(clean(attributes));
          const status = attributes['http.response.status_code'];
          if (typeof status === 'number' && status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
      return requestSpan;
    },
    traceIds() {
      const span = trace.getSpan(contexts.active());
      if (!span) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { traceId, spanId };
    },
    inject(headers) {
      propagator.inject(contexts.active(), headers, headerSetter);
    },
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_TIMEOUT_MS)));
      await Promise.race([provider.shutdown().catch(() => undefined), timeout]);
      clearTimeout(timer);
    },
  };
}
