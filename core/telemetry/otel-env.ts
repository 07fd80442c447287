// What the standard OpenTelemetry environment variables ask of traces and logs (the OTLP
// exporter's endpoint, protocol and headers, the service's name and resource attributes, the
// sampler, the batch processors), read once at start-up with the names and defaults of the
// OpenTelemetry specification ("Environment Variable Specification", "OTLP Exporter
// Configuration"), so that a platform that sets them for every service sets them for Tollgate
// too. Tracing is off unless an OTLP endpoint is set; usage records go out as logs only when
// OTEL_LOGS_EXPORTER=otlp says so. A value that cannot be used is a StartupError naming the variable.
import { z } from 'zod';
import { StartupError } from '../startup-error.ts';

export type Env = Readonly<Record<string, string | undefined>>;

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** Where one signal is exported, and who exports it. */
export interface OtlpTarget {
  /** Where it is POSTed: the signal's endpoint itself (`…/v1/traces`, `…/v1/logs`). */
  readonly url: string;
  readonly protocol: OtlpProtocol;
  /** Sent with every export (an API key for a hosted backend): never logged. */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, service.name left out (serviceName says it). */
  readonly resource: Readonly<Record<string, string>>;
}

/** A batch processor's settings (OTEL_BSP_* for spans, OTEL_BLRP_* for log records). */
export interface BatchSettings {
  readonly scheduledDelayMs: number;
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly exportTimeoutMs: number;
}

/** Tracing as the environment asks for it. */
export interface TracingSettings extends OtlpTarget {
  readonly sampler: SamplerName;
  /** The ratio of the *traceidratio samplers, in [0, 1]. */
  readonly ratio: number;
  readonly batch: BatchSettings;
  /**
   * Prompts and answers recorded in the spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
   * each cut at maxChars characters (TOLLGATE_TRACE_CONTENT_MAX_CHARS); undefined: never.
   */
  readonly content: { readonly maxChars: number } | undefined;
}

/** The variables of Tollgate's own that tracing reads (the rest are the standard OTEL_* ones). */
export const TRACING_VARIABLES = ['TOLLGATE_TRACE_CONTENT_MAX_CHARS'] as const;

/** What a prompt or an answer keeps in a span unless told: a few pages of text. */
export const DEFAULT_CONTENT_MAX_CHARS = 4096;
/** The most a span may be told to keep of each: a span is held in memory until its batch leaves. */
export const MAX_CONTENT_MAX_CHARS = 65_536;

/** Usage records as OTLP logs, as the environment asks for them. */
export interface LogsSettings extends OtlpTarget {
  readonly batch: BatchSettings;
}

type Signal = 'traces' | 'logs';

const truthy = (value: string | undefined) => value?.trim().toLowerCase() === 'true';

/** `key1=value1,key2=value2`, each part URL-encoded (W3C Baggage's format, as the spec says for both variables). */
export function keyValues(text: string | undefined, variable: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text?.trim()) return out;
  for (const part of text.split(',')) {
    if (!part.trim()) continue;
    const at = part.indexOf('=');
    if (at <= 0) throw new StartupError(`${variable}: "${part.trim()}" is not key=value`);
    try {
      out[decodeURIComponent(part.slice(0, at).trim())] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      throw new StartupError(`${variable}: "${part.trim()}" is not URL-encoded`);
    }
  }
  return out;
}

function integer(env: Env, variable: string, fallback: number): number {
  const text = env[variable]?.trim();
  if (!text) return fallback;
  const parsed = z.coerce.number().int().min(0).safeParse(text);
  if (!parsed.success) throw new StartupError(`${variable}: "${text}" is not a whole number of 0 or more`);
  return parsed.data;
}

/** The signal's endpoint: its own variable as it is, else the base one with `/v1/<signal>` added. */
function signalUrl(env: Env, signal: Signal): string | undefined {
  const ownVariable = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`;
  const own = env[ownVariable]?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = own || (base ? `${base.replace(/\/+$/, '')}/v1/${signal}` : undefined);
  if (url === undefined) return undefined;
  const variable = own ? ownVariable : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StartupError(`${variable}: "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new StartupError(`${variable}: only http and https endpoints are supported`);
  return url;
}

/**
 * Where `signal` goes, or undefined without an endpoint: its endpoint, protocol and headers (the
 * signal's own variables over the shared ones), and the service's name and resource.
 */
function otlpTarget(env: Env, signal: Signal, serviceName: string): OtlpTarget | undefined {
  const url = signalUrl(env, signal);
  if (url === undefined) return undefined;
  const SIGNAL = signal.toUpperCase();
  const protocolVariable = env[`OTEL_EXPORTER_OTLP_${SIGNAL}_PROTOCOL`]?.trim()
    ? `OTEL_EXPORTER_OTLP_${SIGNAL}_PROTOCOL`
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[protocolVariable]?.trim() || 'http/protobuf';
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol))
    throw new StartupError(`${protocolVariable}: "${protocol}" is not supported (${OTLP_PROTOCOLS.join(' or ')}; gRPC is not)`);
  const resource = keyValues(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES');
  const named = env.OTEL_SERVICE_NAME?.trim() || resource['service.name'] || serviceName;
  delete resource['service.name'];
  return {
    url,
    protocol: protocol as OtlpProtocol,
    headers: {
      ...keyValues(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...keyValues(env[`OTEL_EXPORTER_OTLP_${SIGNAL}_HEADERS`], `OTEL_EXPORTER_OTLP_${SIGNAL}_HEADERS`),
    },
    serviceName: named,
    resource,
  };
}

/** A batch processor's settings from `<prefix>_SCHEDULE_DELAY` and the rest. */
function batchFrom(env: Env, prefix: 'OTEL_BSP' | 'OTEL_BLRP', scheduledDelayMs: number): BatchSettings {
  return {
    scheduledDelayMs: integer(env, `${prefix}_SCHEDULE_DELAY`, scheduledDelayMs),
    maxQueueSize: Math.max(1, integer(env, `${prefix}_MAX_QUEUE_SIZE`, 2048)),
    maxExportBatchSize: Math.max(1, integer(env, `${prefix}_MAX_EXPORT_BATCH_SIZE`, 512)),
    exportTimeoutMs: integer(env, `${prefix}_EXPORT_TIMEOUT`, 30_000),
  };
}

/**
 * Tracing as `env` asks for it, or undefined when it is off: no OTLP endpoint set,
 * OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none. `serviceName` is the process's default
 * name (`tollgate-gateway`, `tollgate-operator`, `tollgate-router-worker`).
 */
export function tracingFromEnv(env: Env, serviceName: string): TracingSettings | undefined {
  if (truthy(env.OTEL_SDK_DISABLED)) return undefined;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return undefined;
  if (exporter && exporter !== 'otlp') throw new StartupError(`OTEL_TRACES_EXPORTER: "${exporter}" is not supported (otlp or none)`);
  const target = otlpTarget(env, 'traces', serviceName);
  if (target === undefined) return undefined;
  const sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  if (!(SAMPLERS as readonly string[]).includes(sampler))
    throw new StartupError(`OTEL_TRACES_SAMPLER: "${sampler}" is not supported (${SAMPLERS.join(', ')})`);
  const ratioText = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = ratioText ? Number(ratioText) : 1;
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new StartupError(`OTEL_TRACES_SAMPLER_ARG: "${ratioText}" is not a ratio in [0, 1]`);
  return { ...target, sampler: sampler as SamplerName, ratio, batch: batchFrom(env, 'OTEL_BSP', 5000), content: contentFrom(env) };
}

/** Content capture: off unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the GenAI instrumentations' own switch. */
function contentFrom(env: Env): TracingSettings['content'] {
  const capture = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase();
  if (capture === undefined || capture === '' || capture === 'false') return undefined;
  if (capture !== 'true') throw new StartupError(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "${capture}" is not true or false`);
  const text = env.TOLLGATE_TRACE_CONTENT_MAX_CHARS?.trim();
  const maxChars = text ? Number(text) : DEFAULT_CONTENT_MAX_CHARS;
  if (!Number.isInteger(maxChars) || maxChars < 1 || maxChars > MAX_CONTENT_MAX_CHARS)
    throw new StartupError(`TOLLGATE_TRACE_CONTENT_MAX_CHARS: "${text}" is not a whole number from 1 to ${MAX_CONTENT_MAX_CHARS}`);
  return { maxChars };
}

/**
 * Usage records as OTLP logs, or undefined: they go only when OTEL_LOGS_EXPORTER=otlp is set
 * (usage records are a data stream an operator opts into, not the logs the specification's
 * default would send), to the logs endpoint, and never with OTEL_SDK_DISABLED=true.
 */
export function logsFromEnv(env: Env, serviceName: string): LogsSettings | undefined {
  if (truthy(env.OTEL_SDK_DISABLED)) return undefined;
  const exporter = env.OTEL_LOGS_EXPORTER?.trim().toLowerCase();
  if (!exporter || exporter === 'none') return undefined;
  if (exporter !== 'otlp') throw new StartupError(`OTEL_LOGS_EXPORTER: "${exporter}" is not supported (otlp or none)`);
  const target = otlpTarget(env, 'logs', serviceName);
  if (target === undefined)
    throw new StartupError('OTEL_LOGS_EXPORTER=otlp needs an endpoint: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT');
  return { ...target, batch: batchFrom(env, 'OTEL_BLRP', 1000) };
}
