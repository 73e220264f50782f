import { Type } from 'typebox';
import { optional, refuse, text, unset, variable } from './variable.js';

const URL_PATTERN = '^https?://[^\\s]+$';

/**
 * OpenTelemetry traces (docs/operations.md, "Traces"): off unless an OTLP endpoint is set. The
 * exporter reads these (and OTEL_EXPORTER_OTLP_HEADERS) from the environment itself; they are
 * declared here so a malformed one stops the start and the README lists them.
 */
export const TRACING = {
  endpoint: optional(
    variable('OTEL_EXPORTER_OTLP_ENDPOINT', {
      ...text(Type.String({ pattern: URL_PATTERN })),
      default: unset,
      defaultText: 'unset',
      doc: 'OTLP/HTTP collector (`http://collector:4318`): set, the service sends traces there (to `/v1/traces`, JSON) and loads OpenTelemetry; unset, nothing of it is loaded. Spans, attributes and the `trace_id` of log lines: docs/operations.md, "Traces"',
    }),
  ),
  tracesEndpoint: optional(
    variable('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', {
      ...text(Type.String({ pattern: URL_PATTERN })),
      default: unset,
      defaultText: 'unset',
      doc: 'The full URL traces are posted to, used as is (no `/v1/traces` appended); overrides `OTEL_EXPORTER_OTLP_ENDPOINT` for traces and turns tracing on by itself',
    }),
  ),
  headers: optional(
    variable('OTEL_EXPORTER_OTLP_HEADERS', {
      ...text(Type.String({ pattern: '^\\s*[^=,\\s]+\\s*=[^,]*(,\\s*[^=,\\s]+\\s*=[^,]*)*$' })),
      parse: parseHeaders,
      default: unset,
      defaultText: 'unset',
      doc: 'Headers sent with every export, `name=value` pairs comma-separated, values URL-encoded (`authorization=Bearer%20…`): a hosted collector\'s credentials',
    }),
  ),
  serviceName: optional(variable('OTEL_SERVICE_NAME', { ...text(Type.String({ pattern: '^[A-Za-z0-9._-]{1,100}$' })), default: 'fromagerie', doc: 'The traces\' `service.name`' })),
};

/** `a=1,b=x%20y` → { a: '1', b: 'x y' }, as OpenTelemetry reads OTEL_EXPORTER_OTLP_HEADERS. */
function parseHeaders(raw: string): Record<string, string> {
  return Object.fromEntries(
    raw.split(',').map((pair) => {
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1).trim();
      try {
        return [pair.slice(0, at).trim(), decodeURIComponent(value)];
      } catch {
        refuse(`OTEL_EXPORTER_OTLP_HEADERS: the value of ${pair.slice(0, at).trim()} is not URL-encoded`);
        return [];
      }
    }),
  );
}
