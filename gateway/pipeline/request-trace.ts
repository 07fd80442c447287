// One request's trace: a server span named and attributed by the OpenTelemetry GenAI semantic
// conventions (trace-attributes.ts), and a child span for each thing the gateway decided or
// waited on: authentication, the budget hold, each fallback, each upstream attempt (whose context
// goes to the backend as `traceparent`), the stream, and settlement. Made only when tracing is on
// (the pipeline holds `undefined` otherwise, and every call it makes is `trace?.…`), and it never
// throws: a span is an observer of the request, not a part of it.
import { type Attributes, type Context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Tracing } from '../../core/telemetry/tracing.ts';
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { Caller } from '../accounts/caller.ts';
import type { Api } from '../wire/apis.ts';
import type { Usage } from '../billing/usage-block.ts';
import type { ProviderRoute, RouterRoute } from '../routing/routing-table.ts';
import { maskUrl } from '../providers/secrets.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { ATTR, operationOf, providerNameOf, requestAttributes } from '../observability/trace-attributes.ts';
import type { AttemptTrace, AttemptTracer } from '../routing/forwarder.ts';
import type { QueueWaitTrace } from '../routing/placement.ts';
import { inputMessages, outputMessages } from '../observability/trace-content.ts';

/** performance.now() as the wall-clock milliseconds spans take. */
const wall = (at: number) => performance.timeOrigin + at;

/** What a request's trace begins with, from the transport. */
export interface TraceStart {
  readonly endpoint: Endpoint;
  /** The API the caller speaks. */
  readonly api: Api;
  /** The caller's headers (`traceparent`, `tracestate` are read). */
  readonly headers: Record<string, string | string[] | undefined>;
  /** performance.now() when the request arrived, and when its caller was known. */
  readonly arrivedAt: number;
  readonly authenticatedAt: number | undefined;
  readonly caller: Caller;
}

const ignore = () => {};
const UNRECORDED_WAIT: QueueWaitTrace = { traceparent: undefined, answered: ignore };

export class RequestTrace implements AttemptTracer {
  readonly #tracing: Tracing;
  readonly #span: Span;
  readonly #context: Context;
  /** gen_ai.operation.name: the span is named by it, and the model once known. */
  readonly #operation: string;
  readonly #recording: boolean;
  /** Content capture's limit, for the operations that have messages (chat, completions); undefined: none recorded. */
  readonly #content: Tracing['content'];
  #stream: Span | undefined;
  #ended = false;

  constructor(tracing: Tracing, start: TraceStart) {
    this.#tracing = tracing;
    const parent = tracing.extract(start.headers);
    const operation = operationOf(start.endpoint);
    this.#operation = operation;
    this.#content = operation === 'chat' || operation === 'text_completion' ? tracing.content : undefined;
    // Only what a sampler may read is given at the start: a request the sampler leaves out (a
    // ratio, or a caller's unsampled traceparent) then costs one span that records nothing, and
    // none of its children is made (#child).
    this.#span = tracing.tracer.startSpan(
      operation,
      { kind: SpanKind.SERVER, startTime: wall(start.arrivedAt), attributes: { [ATTR.operation]: operation } },
      parent,
    );
    this.#recording = this.#span.isRecording();
    this.#context = trace.setSpan(parent, this.#span);
    if (!this.#recording) return;
    const caller = callerAttributes(start.caller);
    this.#span.setAttributes({ [ATTR.endpoint]: start.endpoint, [ATTR.api]: start.api, ...caller });
    if (start.authenticatedAt !== undefined) this.#child('tollgate.authenticate', start.arrivedAt, caller).end(wall(start.authenticatedAt));
  }

  /** Whether the request is sampled: its spans are recorded and exported. */
  get recording(): boolean {
    return this.#recording;
  }

  /** The request's span as a context: what its usage record's log record belongs to. */
  get context(): Context {
    return this.#context;
  }

  /** The router named and the request's parameters: the span is now named `<operation> <model>`, as the conventions say. */
  resolved(router: RouterRoute, body: unknown): void {
    if (!this.#recording) return;
    this.#span.updateName(`${this.#operation} ${router.spec.name}`);
    this.#span.setAttributes({ [ATTR.requestModel]: router.spec.name, ...requestAttributes(body) });
    const content = this.#content;
    if (content === undefined) return;
    const input = inputMessages(body, content.maxChars);
    if (input === undefined) return;
    this.#span.setAttribute(ATTR.inputMessages, input.json);
    if (input.truncated) this.#span.setAttribute(ATTR.contentTruncated, true);
  }

  /** Admission on `router`: its span, ended by endAdmission(). */
  admitting(router: RouterRoute): Span {
    return this.#child('tollgate.admission', performance.now(), { [ATTR.router]: router.spec.name });
  }

  fellBack(from: RouterRoute, to: RouterRoute, reason: string): void {
    this.#child('tollgate.fallback', performance.now(), {
      [ATTR.fallbackFrom]: from.spec.name,
      [ATTR.fallbackTo]: to.spec.name,
      [ATTR.fallbackReason]: reason,
    }).end();
  }

  attempt(router: RouterRoute, provider: ProviderRoute, attempt: number, retry: number): AttemptTrace {
    if (!this.#recording) {
      // The backend joins the caller's trace as unsampled: the request's own context, with no span of its own.
      const headers: Record<string, string> = {};
      this.#tracing.inject(this.#context, headers);
      return { headers, ok: ignore, failed: ignore };
    }
    const span = this.#tracing.tracer.startSpan(
      `${this.#operation} ${provider.spec.model_name}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR.operation]: this.#operation,
          ...providerAttributes(provider),
          [ATTR.router]: router.spec.name,
          [ATTR.attempt]: attempt,
          [ATTR.retry]: retry,
        },
      },
      this.#context,
    );
    const headers: Record<string, string> = {};
    this.#tracing.inject(trace.setSpan(this.#context, span), headers);
    return {
      headers,
      ok: () => span.end(),
      failed: (error) => {
        const failure = error instanceof UpstreamError ? error.failure : 'error';
        span.setAttributes({ [ATTR.errorType]: failure, [ATTR.failure]: failure });
        if (error instanceof UpstreamError && error.status !== undefined) span.setAttribute(ATTR.upstreamStatus, error.status);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 500) : undefined });
        span.end();
      },
    };
  }

  queued(router: RouterRoute, priority: number, maxWaitMs: number): QueueWaitTrace {
    if (!this.#recording) return UNRECORDED_WAIT;
    const span = this.#child('tollgate.queue', performance.now(), {
      [ATTR.router]: router.spec.name,
      [ATTR.queuePriority]: priority,
      [ATTR.queueMaxWaitMs]: maxWaitMs,
    });
    const { traceId, spanId } = span.spanContext();
    return {
      // Sampled: only recorded waits get here.
      traceparent: `00-${traceId}-${spanId}-01`,
      answered(outcome, provider) {
        span.setAttributes({ [ATTR.queueOutcome]: outcome, ...(provider ? { [ATTR.providerId]: provider } : {}) });
        if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        span.end();
      },
    };
  }

  /** The answer streams from now on. */
  streaming(): void {
    this.#stream ??= this.#child('tollgate.stream', performance.now(), {});
  }

  /**
   * The request is over: the served router and provider, the usage, cost and carbon the caller
   * was told of (`usage`), and how it ended. Settlement's span records the charge.
   */
  ended(outcome: {
    status: number;
    router?: RouterRoute | undefined;
    provider?: ProviderRoute | undefined;
    usage?: Usage | undefined;
    ttftMs?: number | null;
    /** A stream's events that carried text. */
    chunks?: number | undefined;
    error?: unknown;
    /** The answer's text, asked for only when content is recorded. */
    output?: (() => string | undefined) | undefined;
  }): void {
    if (this.#ended || !this.#recording) return;
    this.#ended = true;
    const span = this.#span;
    const { usage } = outcome;
    if (this.#stream) {
      this.#stream.setAttributes({
        [ATTR.chunks]: outcome.chunks ?? 0,
        ...(outcome.ttftMs == null ? {} : { [ATTR.ttftMs]: outcome.ttftMs }),
      });
      this.#stream.end();
    }
    span.setAttribute(ATTR.httpStatus, outcome.status);
    if (outcome.router) span.setAttributes({ [ATTR.responseModel]: outcome.router.spec.name, [ATTR.router]: outcome.router.spec.name });
    if (outcome.provider)
      span.setAttributes({ [ATTR.providerName]: providerNameOf(outcome.provider.spec.type), [ATTR.providerId]: outcome.provider.spec.id });
    if (outcome.ttftMs != null) span.setAttribute(ATTR.ttftSeconds, outcome.ttftMs / 1000);
    if (usage) {
      span.setAttributes({ [ATTR.inputTokens]: usage.block.prompt_tokens, [ATTR.outputTokens]: usage.block.completion_tokens });
      if (usage.cache.cached > 0) span.setAttribute(ATTR.cacheReadTokens, usage.cache.cached);
      if (usage.cache.writes > 0) span.setAttribute(ATTR.cacheWriteTokens, usage.cache.writes);
    }
    const content = this.#content;
    const text = content === undefined ? undefined : outcome.output?.();
    if (content !== undefined && text !== undefined) {
      const output = outputMessages(text, content.maxChars);
      span.setAttribute(ATTR.outputMessages, output.json);
      if (output.truncated) span.setAttribute(ATTR.contentTruncated, true);
    }
    if (outcome.status >= 400) span.setAttribute(ATTR.errorType, errorTypeOf(outcome.error, outcome.status));
    // A server span is in error for the server's failures only: a 4xx is the caller's (HTTP conventions).
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }

  /** Settlement's span: started now, ended with what was charged (`charged`), after the server span if it takes longer. */
  settling(usage: Usage | undefined): (chargedMicros: bigint) => void {
    if (!this.#recording) return ignore;
    const span = this.#child('tollgate.settle', performance.now(), {
      [ATTR.costMicros]: Number(usage?.costMicros ?? 0n),
      [ATTR.cost]: usage?.block.cost ?? 0,
      [ATTR.carbonKwh]: usage?.block.carbon.kWh ?? 0,
      [ATTR.carbonKg]: usage?.block.carbon.kgCO2eq ?? 0,
    });
    this.#span.end();
    return (chargedMicros) => {
      span.setAttribute(ATTR.chargedMicros, Number(chargedMicros));
      span.end();
    };
  }

  /** A child span; an unsampled request's own span, which records nothing, instead. */
  #child(name: string, startedAt: number, attributes: Attributes): Span {
    if (!this.#recording) return this.#span;
    return this.#tracing.tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: wall(startedAt), attributes }, this.#context);
  }
}

/** The admission span's ending: the levels held, or the level and kind that refused. */
export function endAdmission(span: Span, outcome: { levels?: readonly string[]; refusedLevel?: string; refusal?: string }): void {
  if (outcome.levels) span.setAttribute(ATTR.admissionLevels, outcome.levels.join(','));
  if (outcome.refusal) {
    span.setAttributes({
      [ATTR.admissionRefusal]: outcome.refusal,
      ...(outcome.refusedLevel ? { [ATTR.admissionRefusedLevel]: outcome.refusedLevel } : {}),
    });
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.refusal });
  }
  span.end();
}

function callerAttributes(caller: Caller): Attributes {
  return {
    [ATTR.userId]: caller.user.id,
    [ATTR.keyId]: caller.key.id,
    ...(caller.team ? { [ATTR.teamId]: caller.team.id } : {}),
  };
}

/** Each provider's attributes, worked out once (routes live as long as their routing table). */
const providerAttributesOf = new WeakMap<ProviderRoute, Attributes>();

/** An attempt's attributes that its provider alone decides: the model, the provider's name and id, the backend's address. */
function providerAttributes(provider: ProviderRoute): Attributes {
  let attributes = providerAttributesOf.get(provider);
  if (attributes === undefined) {
    const url = urlOf(provider);
    attributes = {
      [ATTR.requestModel]: provider.spec.model_name,
      [ATTR.providerName]: providerNameOf(provider.spec.type),
      [ATTR.providerId]: provider.spec.id,
      ...serverOf(url),
      ...(url ? { [ATTR.replica]: maskUrl(url) } : {}),
    };
    providerAttributesOf.set(provider, attributes);
  }
  return attributes;
}

/** The backend's URL: none for the simulator. */
function urlOf(provider: ProviderRoute): string | undefined {
  return 'url' in provider.spec ? provider.spec.url : undefined;
}

/** server.address and server.port of a backend's URL (none for the simulator, which has no URL). */
function serverOf(url: string | undefined): Attributes {
  if (!url) return {};
  try {
    const parsed = new URL(url);
    return { [ATTR.serverAddress]: parsed.hostname, [ATTR.serverPort]: Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80) };
  } catch {
    return {};
  }
}

function errorTypeOf(error: unknown, status: number): string {
  if (error instanceof UpstreamError) return error.failure;
  if (error instanceof Error && error.name !== 'Error') return error.name;
  return String(status);
}
