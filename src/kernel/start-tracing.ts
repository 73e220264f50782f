import { noTracing, type TracedService, type Tracing } from './tracing.js';

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: either turns tracing on. */
  endpoint?: string | undefined;
  tracesEndpoint?: string | undefined;
  serviceName?: string | undefined;
  /** OTEL_EXPORTER_OTLP_HEADERS, parsed. */
  headers?: Record<string, string> | undefined;
}

/** Tracing on when an OTLP endpoint is set, loading OpenTelemetry only then (a dynamic import: nothing else may import it). */
export async function startTracing(settings: TracingSettings | undefined, service: Omit<TracedService, 'serviceName'>): Promise<Tracing> {
  if (!settings?.endpoint && !settings?.tracesEndpoint) return noTracing;
  const { openTelemetryTracing } = await import('./opentelemetry.js');
  // As OpenTelemetry's exporters read them: the traces URL as given, or the endpoint's /v1/traces.
  const url = settings.tracesEndpoint ?? `${settings.endpoint!.replace(/\/+$/, '')}/v1/traces`;
  return openTelemetryTracing({ ...service, serviceName: settings.serviceName ?? 'fromagerie' }, { url, headers: settings.headers ?? {} });
}
