// A process's tracing, built once from its settings (otel-env.ts) with the OpenTelemetry SDK: a
// tracer provider with the configured sampler, a batch span processor and the OTLP/HTTP exporter
// (protobuf or JSON). Nothing is registered globally: the tracer and the W3C Trace Context
// propagator are handed to what traces, and contexts are passed along explicitly rather than
// through an async-local store, so that a request path with tracing off pays nothing for it.
import { type Context, type Tracer, ROOT_CONTEXT, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TracingSettings } from './otel-env.ts';

/** The version of the OpenTelemetry semantic conventions the attributes follow (docs/observability.md). */
export const SEMCONV_VERSION = '1.45.0';
export const SCHEMA_URL = `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`;

/** Headers as a request carries them (node:http's form) or as they are sent on. */
export type HeaderCarrier = Record<string, string | string[] | undefined>;

const getter: TextMapGetter<HeaderCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};
const setter: TextMapSetter<HeaderCarrier> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

export interface Tracing {
  readonly tracer: Tracer;
  /** The context a caller's `traceparent` and `tracestate` continue, or the root when it sent none (or a malformed one). */
  extract(headers: HeaderCarrier): Context;
  /** Writes `context`'s `traceparent` (and `tracestate`) into `headers`, for the next hop. */
  inject(context: Context, headers: HeaderCarrier): void;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
  /** Prompts and answers go in the spans, each cut at maxChars; undefined: never (the default). */
  readonly content: TracingSettings['content'];
}

function samplerOf(settings: TracingSettings): Sampler {
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(settings.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.ratio) });
  }
}

/** The OTLP/HTTP exporter of the configured protocol, loaded only when tracing is on. */
async function exporterOf(settings: TracingSettings): Promise<SpanExporter> {
  const options = { url: settings.url, headers: { ...settings.headers }, timeoutMillis: settings.batch.exportTimeoutMs };
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}

/** Tracing as `settings` say, `version` being the build's (the tracer's instrumentation version). */
export async function startTracing(settings: TracingSettings, version: string, exporter?: SpanExporter): Promise<Tracing> {
  const provider = new TracerProvider({
    sampler: samplerOf(settings),
    resource: resourceFromAttributes({ ...settings.resource, 'service.name': settings.serviceName, 'service.version': version }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: exporter ?? (await exporterOf(settings)),
        scheduledDelayMillis: settings.batch.scheduledDelayMs,
        maxQueueSize: settings.batch.maxQueueSize,
        maxExportBatchSize: Math.min(settings.batch.maxExportBatchSize, settings.batch.maxQueueSize),
        exportTimeoutMillis: settings.batch.exportTimeoutMs,
      }),
    ],
  });
  const propagator = new W3CTraceContextPropagator();
  return {
    tracer: provider.getTracer('tollgate', version, { schemaUrl: SCHEMA_URL }),
    extract: (headers) => propagator.extract(ROOT_CONTEXT, headers, getter),
    inject: (context, headers) => propagator.inject(context, headers, setter),
    shutdown: () => provider.shutdown(),
    content: settings.content,
  };
}
