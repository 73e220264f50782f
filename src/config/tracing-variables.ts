import { Type } from 'typebox';
import { optional, text, unset, variable } from './variable.js';

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
  serviceName: optional(variable('OTEL_SERVICE_NAME', { ...text(Type.String({ pattern: '^[A-Za-z0-9._-]{1,100}$' })), default: 'fromagerie', doc: 'The traces\' `service.name`' })),
};
