// Usage records as OpenTelemetry log records (docs/observability.md), for a data warehouse or a
// log store that wants spend without reading Redis: each record, once written to the store, is
// also emitted with the trace of its request (when it has one), batched and sent over OTLP/HTTP.
// Its body is the record itself, money exact (micro-units as decimal strings, as in the Redis
// usage stream); a few attributes repeat what log stores filter on.
import { type Context, SeverityNumber } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, type LogRecordExporter, LoggerProvider } from '@opentelemetry/sdk-logs';
import type { UsageRecord } from '../store/usage-log.ts';
import type { LogsSettings } from './otel-env.ts';

/** The log record's event name. */
export const USAGE_EVENT = 'tollgate.usage';

export interface UsageLogs {
  /** Sends `record` (never throws, never waits): `context` ties it to its request's trace. */
  emit(record: UsageRecord, context?: Context): void;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

async function exporterOf(settings: LogsSettings): Promise<LogRecordExporter> {
  const options = { url: settings.url, headers: { ...settings.headers }, timeoutMillis: settings.batch.exportTimeoutMs };
  if (settings.protocol === 'http/json') {
    const { OTLPLogExporter } = await import('@opentelemetry/exporter-logs-otlp-http');
    return new OTLPLogExporter(options);
  }
  const { OTLPLogExporter } = await import('@opentelemetry/exporter-logs-otlp-proto');
  return new OTLPLogExporter(options);
}

/** The record as the log record's body: every field, the micro-units as decimal strings. */
export function usageBody(record: UsageRecord): Record<string, string | number | boolean | null> {
  return {
    id: record.id,
    time: new Date(record.time).toISOString(),
    user_id: record.user_id,
    key_id: record.key_id,
    team_id: record.team_id,
    router: record.router,
    requested_router: record.requested_router,
    provider: record.provider,
    endpoint: record.endpoint,
    status: record.status,
    prompt_tokens: record.prompt_tokens,
    completion_tokens: record.completion_tokens,
    cached_tokens: record.cached_tokens,
    cache_write_tokens: record.cache_write_tokens,
    audio_seconds: record.audio_seconds,
    cost_micros: record.cost_micros.toString(),
    charged_micros: record.charged_micros.toString(),
    uncovered_micros: record.uncovered_micros.toString(),
    usage_anomaly: record.usage_anomaly,
    kwh: record.kwh,
    kgco2eq: record.kgco2eq,
    latency_ms: record.latency_ms,
    ttft_ms: record.ttft_ms,
    incomplete: record.incomplete,
  };
}

export async function startUsageLogs(settings: LogsSettings, version: string, exporter?: LogRecordExporter): Promise<UsageLogs> {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ ...settings.resource, 'service.name': settings.serviceName, 'service.version': version }),
    processors: [
      new BatchLogRecordProcessor({
        exporter: exporter ?? (await exporterOf(settings)),
        scheduledDelayMillis: settings.batch.scheduledDelayMs,
        maxQueueSize: settings.batch.maxQueueSize,
        maxExportBatchSize: Math.min(settings.batch.maxExportBatchSize, settings.batch.maxQueueSize),
        exportTimeoutMillis: settings.batch.exportTimeoutMs,
      }),
    ],
  });
  const logger = provider.getLogger('tollgate', version);
  return {
    emit(record, context) {
      logger.emit({
        eventName: USAGE_EVENT,
        timestamp: record.time,
        severityNumber: SeverityNumber.INFO,
        severityText: 'INFO',
        body: usageBody(record),
        attributes: {
          'tollgate.user.id': record.user_id,
          ...(record.team_id ? { 'tollgate.team.id': record.team_id } : {}),
          'tollgate.router': record.router,
          'tollgate.cost_micros': record.cost_micros.toString(),
        },
        ...(context ? { context } : {}),
      });
    },
    shutdown: () => provider.shutdown(),
  };
}
