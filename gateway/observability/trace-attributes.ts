// The attributes of Tollgate's spans, declared once: those of the OpenTelemetry semantic
// conventions (GenAI, HTTP, server; version SEMCONV_VERSION in core/telemetry/tracing.ts, written out
// here since the GenAI ones are still in development and their constants may move), and
// Tollgate's own under `tollgate.`. docs/observability.md lists them in one table.
import type { Attributes } from '@opentelemetry/api';
import type { Endpoint, ProviderType } from '../../core/resources/kinds.ts';

export const ATTR = {
  // GenAI semantic conventions
  operation: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  providerName: 'gen_ai.provider.name',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  maxTokens: 'gen_ai.request.max_tokens',
  temperature: 'gen_ai.request.temperature',
  topP: 'gen_ai.request.top_p',
  stream: 'gen_ai.request.stream',
  ttftSeconds: 'gen_ai.response.time_to_first_chunk',
  // Content, only when turned on (trace-content.ts)
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  // General conventions
  serverAddress: 'server.address',
  serverPort: 'server.port',
  httpStatus: 'http.response.status_code',
  errorType: 'error.type',
  // Tollgate's own
  endpoint: 'tollgate.endpoint',
  api: 'tollgate.api',
  userId: 'tollgate.user.id',
  keyId: 'tollgate.key.id',
  teamId: 'tollgate.team.id',
  router: 'tollgate.router',
  providerId: 'tollgate.provider.id',
  replica: 'tollgate.replica',
  attempt: 'tollgate.attempt',
  retry: 'tollgate.retry',
  failure: 'tollgate.failure',
  upstreamStatus: 'tollgate.upstream.status_code',
  admissionLevels: 'tollgate.admission.levels',
  admissionRefusal: 'tollgate.admission.refusal',
  admissionRefusedLevel: 'tollgate.admission.refused_level',
  fallbackFrom: 'tollgate.fallback.from',
  fallbackTo: 'tollgate.fallback.to',
  fallbackReason: 'tollgate.fallback.reason',
  queuePriority: 'tollgate.queue.priority',
  queueMaxWaitMs: 'tollgate.queue.max_wait_ms',
  queueOutcome: 'tollgate.queue.outcome',
  queueWaitedMs: 'tollgate.queue.waited_ms',
  queueWorker: 'tollgate.queue.worker',
  chunks: 'tollgate.stream.chunks',
  ttftMs: 'tollgate.stream.ttft_ms',
  cost: 'tollgate.cost',
  costMicros: 'tollgate.cost_micros',
  chargedMicros: 'tollgate.charged_micros',
  carbonKwh: 'tollgate.carbon.kwh',
  carbonKg: 'tollgate.carbon.kgco2eq',
  contentTruncated: 'tollgate.content.truncated',
} as const;

/** gen_ai.operation.name of an endpoint: the conventions' names where they have one. */
export function operationOf(endpoint: Endpoint): string {
  switch (endpoint) {
    case 'chat':
      return 'chat';
    case 'completions':
      return 'text_completion';
    case 'embeddings':
      return 'embeddings';
    case 'rerank':
      return 'rerank';
    case 'transcriptions':
      return 'transcription';
  }
}

/** gen_ai.provider.name of a provider type: the conventions' well-known names, else the type. */
export function providerNameOf(type: ProviderType): string {
  return type === 'mistral' ? 'mistral_ai' : type;
}

/** The request parameters the conventions name, as the caller sent them (numbers and the stream flag only: no content). */
export function requestAttributes(body: unknown): Attributes {
  if (body === null || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const out: Attributes = {};
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (typeof maxTokens === 'number') out[ATTR.maxTokens] = maxTokens;
  if (typeof b.temperature === 'number') out[ATTR.temperature] = b.temperature;
  if (typeof b.top_p === 'number') out[ATTR.topP] = b.top_p;
  if (typeof b.stream === 'boolean') out[ATTR.stream] = b.stream;
  return out;
}
