import type { Logger } from '../logger.js';
import type { ConnectionStore } from '../providers/connections.js';
import type { SettingsStore } from '../settings/store.js';
import type { UsageService } from '../usage/service.js';
import { Tracing } from './tracing.js';

/**
 * Trace export when configured: the otelEndpoint setting, else the standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * / OTEL_EXPORTER_OTLP_ENDPOINT variables (the exporter also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT...).
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. Undefined when off: nothing is loaded
 * into the request path.
 */
export function tracingFromSettings(o: {
  settings: SettingsStore;
  usage: UsageService;
  connections: ConnectionStore;
  label: (id: string) => string;
  version: string;
  log: Logger;
}): Tracing | undefined {
  const env = process.env;
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const s = o.settings.get();
  if (!s.otelEndpoint && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !env.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  const protocol = s.otelProtocol || env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    o.log.warn('OpenTelemetry trace export off: unsupported OTLP protocol (http/protobuf or http/json)', { protocol });
    return undefined;
  }
  const tracing = new Tracing({
    url: s.otelEndpoint || undefined,
    protocol,
    captureContent: s.otelCaptureContent,
    propagate: s.otelPropagateTraceparent,
    usage: o.usage,
    connections: o.connections,
    label: o.label,
    version: o.version,
    log: o.log,
    scheduleDelayMs: Number.isFinite(delay) && delay > 0 ? delay : undefined,
  });
  o.log.info('OpenTelemetry trace export on', { endpoint: s.otelEndpoint || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol });
  return tracing;
}
