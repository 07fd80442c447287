// The OpenAI-compatible inference endpoints. Each request follows the spec's flow: find the
// router (404), check its type against the endpoint (400), validate the body, charge admission
// to the caller's budget and limits (402/429), forward to a provider, and answer with the
// router's name as `model` and a `usage` block with cost and carbon. However the request ends,
// it is settled and recorded exactly once, and the provider's slot it took is given back once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ENDPOINTS, type Endpoint } from '../../../core/resources/kinds.ts';
import { formatPath } from '../../../core/resources/consistency.ts';
import { ENDPOINT_SPECS } from '../../endpoints/registry.ts';
import { choiceText, newId, readTranscriptUsage, readUsage, unixSeconds, type JsonObject } from '../../providers/openai-wire.ts';
import type { ForwardResult } from '../../providers/adapter.ts';
import type { NativeRequest } from '../../providers/native.ts';
import { isPriced } from '../../billing/worst-case.ts';
import type { ChunkStream } from '../../providers/chunk-stream.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { countTextTokens, TokenCount } from '../../metering/tokens.ts';
import { relayChunks } from './stream-relay.ts';
import type { ServedRouting } from '../../routing/served-routing.ts';
import type { RouterRoute } from '../../routing/routing-table.ts';
import { forward, type Forwarded, type ForwarderDeps } from '../../routing/forwarder.ts';
import { promptTokenCount, usageFor, type Usage } from '../../metering/usage-block.ts';
import type { Admitted, Billing, Settled } from '../../billing/billing.ts';
import { rateLimitHeaders } from '../rate-limit-headers.ts';
import type { Dialect } from '../../dialects/dialect.ts';
import { ANTHROPIC, countTokensChat } from '../../dialects/anthropic/anthropic-dialect.ts';
import { responsesDialect, type StoredLimits } from '../../dialects/responses/responses-dialect.ts';
import type { ResponseStore } from '../../../core/store/responses.ts';
import { putBudgetHeaders } from '../budget-headers.ts';
import { mayCall, priorityOf, type Caller } from '../../accounts/caller.ts';
import { callerOf } from '../auth.ts';
import { type ApiError, errors } from '../api-error.ts';
import { statusOf, streamEnding } from '../error-map.ts';
import type { FallbackReason, OutcomeRecorder } from './request-outcome.ts';
import { ContextLengthError, InsufficientBudgetError, RateLimitedError } from '../../billing/billing-errors.ts';
import {
  ModelTooBusyError,
  NoProviderForEndpointError,
  ProvidersFailedError,
  QueueUnavailableError,
} from '../../routing/routing-errors.ts';

export interface InferenceDeps {
  /** The Responses API's stored responses. */
  readonly responses: ResponseStore;
  /** How large a conversation may be stored (the Responses API). */
  readonly storedLimits: StoredLimits;
  /** Where a stored copy that could not be written is told of. */
  readonly log: { warn(fields: object, message: string): void };
  readonly routing: ServedRouting;
  readonly forwarder: ForwarderDeps;
  readonly outcomes: OutcomeRecorder;
  readonly billing: Billing;
}

/** A request on its way through, with what every step after admission needs. */
interface Call {
  readonly endpoint: Endpoint;
  /** The body as its endpoint's schema parsed it. */
  readonly body: JsonObject;
  /** The caller's own request, to pass through to providers that speak its API (providers/native.ts). */
  readonly native: NativeRequest | undefined;
  readonly caller: Caller;
  /** The router the caller named. */
  readonly requested: RouterRoute;
  /** The router serving: the one named, or a fallback of it. */
  readonly router: RouterRoute;
  readonly admitted: Admitted;
  readonly startedAt: number;
  readonly abort: AbortController;
  readonly stream: boolean;
  /** performance.now() time after which no attempt, retry or fallback starts. */
  readonly deadline: number;
  /** The API the caller speaks, when not OpenAI's (the request was translated to chat). */
  readonly dialect: Dialect | undefined;
}

/** How a forwarded request ended. */
interface Ending {
  readonly status: number;
  readonly forwarded: Forwarded;
  readonly usage: Usage;
  readonly upstreamSeconds: number;
  readonly ttftMs: number | null;
  readonly incomplete: boolean;
}

export function registerInference(app: FastifyInstance, deps: InferenceDeps): void {
  for (const endpoint of ENDPOINTS) {
    const spec = ENDPOINT_SPECS[endpoint];
    // A transcription's audio comes as a multipart form (multipart-body.ts).
    const config = { multipart: spec.audio !== undefined };
    app.post(spec.path, { config }, (request, reply) => handle(endpoint, request, reply, deps, undefined));
  }
  // Anthropic's Messages API: the chat endpoint, spoken in Anthropic's format (its errors too).
  app.post('/v1/messages', { config: { dialect: ANTHROPIC } }, (request, reply) => handle('chat', request, reply, deps, ANTHROPIC));
  // OpenAI's Responses API: the chat endpoint too, its conversations stored per caller.
  app.post('/v1/responses', (request, reply) =>
    handle('chat', request, reply, deps, responsesDialect(callerOf(request).user.id, deps.responses, deps.storedLimits, request.bodyBytes)),
  );
  // Its prompt counted as the gateway counts a chat prompt (o200k, the chat template's overhead
  // included): what the hold and the usage of that request start from. Free, as Anthropic's is.
  app.post('/v1/messages/count_tokens', { config: { dialect: ANTHROPIC } }, async (request) => {
    const router = routerOf('chat', request.body, deps);
    if (!mayCall(callerOf(request), router.spec.name)) throw errors.modelNotAllowed();
    return { input_tokens: promptTokenCount('chat', countTokensChat(request.body), new TokenCount()).tokens };
  });
}

async function handle(
  endpoint: Endpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  deps: InferenceDeps,
  dialect: Dialect | undefined,
): Promise<string | undefined> {
  const startedAt = performance.now();
  const caller = callerOf(request);
  let requested: RouterRoute | undefined;
  let call: Call | undefined;
  try {
    // The router first (spec 7's errors come before the body's), then the body in the gateway's form.
    let routed: { router: RouterRoute; body: JsonObject };
    let native: NativeRequest | undefined;
    if (dialect) {
      const router = routerOf(endpoint, request.body, deps);
      const api = dialect.nativeApi;
      const passesThrough = api !== undefined && router.nativeApis.has(api);
      // The translation is built to the chat schema from a body the dialect's own schema checked: not parsed again.
      routed = { router, body: await dialect.toChat(request.body, passesThrough) };
      if (passesThrough) {
        const body = request.body as JsonObject;
        native = { api, body: dialect.nativeBody ? dialect.nativeBody(body) : body };
      }
    } else {
      routed = route(endpoint, request.body, deps);
    }
    requested = routed.router;
    if (!mayCall(caller, requested.spec.name)) throw errors.modelNotAllowed();
    const abort = new AbortController();
    // The client going away cancels the upstream request, streamed or not.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const stream = ENDPOINT_SPECS[endpoint].streams(routed.body);
    const deadline = startedAt + timeoutMs(request, deps.forwarder.options.requestTimeoutMs);
    const start = { endpoint, body: routed.body, native, caller, requested, startedAt, abort, stream, deadline, dialect };
    let forwarded: Forwarded;
    if (requested.fallbacks.length === 0) {
      call = { ...start, router: requested, admitted: await deps.billing.admit(caller, requested, endpoint, routed.body) };
      forwarded = await forward(forwarding(call), deps.forwarder);
    } else {
      forwarded = await withFallbacks(start, deps, (admitted) => {
        call = admitted;
      });
    }
    const served = call!;
    let failure: UpstreamError | undefined;
    try {
      if (forwarded.result.kind !== 'stream') return await answer(served, forwarded, forwarded.result, reply, deps);
      failure = await relay(served, forwarded, forwarded.result.chunks, reply, deps);
      return undefined;
    } catch (error) {
      if (error instanceof UpstreamError) failure = error;
      throw error;
    } finally {
      forwarded.release(failure);
    }
  } catch (error) {
    refused({ endpoint, request, caller, requested, call, status: statusOf(error), startedAt, dialect }, deps);
    throw error;
  }
}

const forwarding = (call: Call) => ({
  router: call.router,
  endpoint: call.endpoint,
  body: call.body,
  native: call.native,
  stream: call.stream,
  signal: call.abort.signal,
  priority: priorityOf(call.caller),
  caller: call.caller.user.id,
  deadline: call.deadline,
});

/** The header a client shortens its request's deadline with, in seconds. */
export const TIMEOUT_HEADER = 'x-tollgate-timeout';

/** The request's deadline in ms: the process's, or the shorter one the client asked for. */
function timeoutMs(request: FastifyRequest, processMs: number): number {
  const asked = request.headers[TIMEOUT_HEADER];
  if (asked === undefined) return processMs;
  const seconds = typeof asked === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(asked) ? Number(asked) : Number.NaN;
  if (!(seconds > 0)) throw errors.invalidRequest(`${TIMEOUT_HEADER}: must be a number of seconds more than 0`, TIMEOUT_HEADER);
  return Math.min(processMs, seconds * 1000);
}

/**
 * The router asked for, then its fallbacks in order, until one serves (docs/failure-handling.md).
 * A router is left for the next when it cannot serve: its providers all failed before the first
 * byte, are cooling down or unhealthy, it is too busy (queue mode), has no provider for the
 * endpoint, or (context fallback) the request cannot fit its context. Each router is admitted on
 * its own before anything is sent to it: the hold is its price, the rate limits its own, and the
 * hold of a router left is given back. A fallback the caller is not allowed, or whose budget hold
 * or rate limit refuses the request, is passed over; the router asked for is never passed over
 * for the caller's budget or limits. `onCall` hears the router in use, for settlement.
 */
async function withFallbacks(
  start: Omit<Call, 'router' | 'admitted'>,
  deps: InferenceDeps,
  onCall: (call: Call | undefined) => void,
): Promise<Forwarded> {
  const { endpoint, body, caller, requested } = start;
  const chain = [
    requested,
    ...requested.fallbacks.filter((r) => ENDPOINT_SPECS[endpoint].routerTypes.includes(r.spec.type) && mayCall(caller, r.spec.name)),
  ];
  const contextFallback = requested.contextFallback;
  // What the caller is told when no router serves: the last router's failure to serve, else a
  // fallback's refusal at admission, else the request's being too long for the router asked for.
  let unserved: unknown;
  let refusal: unknown;
  let tooLong: unknown;
  for (let i = 0; i < chain.length; i++) {
    const router = chain[i]!;
    const last = i === chain.length - 1;
    const next = chain[i + 1];
    // Past the deadline no fallback is started: the failure that led here is the answer.
    if (unserved !== undefined && deps.forwarder.clock() >= start.deadline) throw unserved;
    let admitted: Admitted;
    try {
      admitted = await deps.billing.admit(caller, router, endpoint, body, contextFallback && !last);
    } catch (error) {
      // A fallback the request does not fit is passed over like one the caller cannot afford.
      const skippable = error instanceof ContextLengthError ? contextFallback || i > 0 : i > 0 && refusesCaller(error);
      if (!skippable) throw error;
      if (error instanceof ContextLengthError) tooLong ??= error;
      else refusal = error;
      if (next) {
        if (error instanceof ContextLengthError && unserved === undefined) deps.outcomes.fellBack(router, next, 'context');
        continue;
      }
      throw unserved ?? refusal ?? tooLong;
    }
    const call: Call = { ...start, router, admitted };
    onCall(call);
    try {
      return await forward({ ...forwarding(call), onlyHealthy: !last }, deps.forwarder);
    } catch (error) {
      const reason = cannotServe(error);
      if (!reason || !next) throw error;
      deps.billing.release(caller, admitted);
      onCall(undefined);
      unserved = error;
      deps.outcomes.fellBack(router, next, reason);
    }
  }
  // Not reached: the last router's failures are thrown above.
  throw unserved;
}

/** Why a router could not serve, when the request may go on to a fallback; undefined when not (the caller's fault, or it went away). */
function cannotServe(error: unknown): FallbackReason | undefined {
  if (error instanceof ProvidersFailedError) return error.attempts === 0 ? 'unavailable' : 'failed';
  if (error instanceof ModelTooBusyError) return 'too_busy';
  if (error instanceof NoProviderForEndpointError || error instanceof QueueUnavailableError) return 'unavailable';
  return undefined;
}

/** The caller's budget or rate limit refused the request on this router. */
const refusesCaller = (error: unknown) => error instanceof InsufficientBudgetError || error instanceof RateLimitedError;

/** Steps 1 and 2 of the spec's flow: the router the body's `model` names, of a type the endpoint serves. */
function routerOf(endpoint: Endpoint, body: unknown, deps: InferenceDeps): RouterRoute {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The request body must be a JSON object');
  const model = (body as JsonObject).model;
  if (typeof model !== 'string' || model === '')
    throw errors.invalidRequest('You must provide a model parameter (a router name or alias)', 'model');
  const router = deps.routing.table.lookup(model);
  if (!router) throw errors.modelNotFound();
  if (!ENDPOINT_SPECS[endpoint].routerTypes.includes(router.spec.type)) throw errors.wrongModelType();
  return router;
}

/** The router (routerOf), then the body's own shape: the body as its endpoint's schema parsed it. */
function route(endpoint: Endpoint, body: unknown, deps: InferenceDeps): { router: RouterRoute; body: JsonObject } {
  const router = routerOf(endpoint, body, deps);
  const spec = ENDPOINT_SPECS[endpoint];
  const parsed = spec.schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = formatPath(issue.path);
    throw errors.invalidRequest(`Invalid request: ${param ? `${param}: ` : ''}${issue.message}`, param || null);
  }
  // A priced transcription is held for its audio's whole length, which must be known before it is sent.
  if (spec.audio && spec.audio(parsed.data).seconds === undefined && isPriced(router))
    throw errors.unreadableAudio(spec.audio(parsed.data).unreadable);
  return { router, body: parsed.data };
}

/**
 * A whole answer: the router's name as `model`, usage with cost and carbon added (in the caller's
 * dialect, kept if it keeps answers). A transcript that is not JSON (text, SRT, WebVTT) goes as
 * it came, its usage in the `x-tollgate-usage` header.
 */
async function answer(
  call: Call,
  forwarded: Forwarded,
  result: Exclude<ForwardResult, { kind: 'stream' }>,
  reply: FastifyReply,
  deps: InferenceDeps,
): Promise<string> {
  const upstreamSeconds = (performance.now() - forwarded.sentAt) / 1000;
  const body = result.kind === 'body' ? result.body : undefined;
  const transcript = call.endpoint === 'transcriptions' && body ? readTranscriptUsage(body) : undefined;
  const usage = usageFor({
    router: call.router,
    provider: forwarded.provider,
    endpoint: call.endpoint,
    reported: transcript ? transcript.tokens : body && readUsage(body.usage),
    reportedSeconds: transcript?.seconds,
    request: call.body,
    counts: call.admitted,
    completionTokens: () => (body ? countTextTokens(choiceText(body)) : 0),
    latencySeconds: upstreamSeconds,
  });
  let text: string;
  let contentType = 'application/json; charset=utf-8';
  if (result.kind === 'text') {
    reply.header(USAGE_HEADER, JSON.stringify(usage.block));
    text = result.text;
    // A transcript is text of some kind; nothing else a backend names goes to the client.
    if (/^text\/[a-z]+(;|$)/i.test(result.contentType)) contentType = result.contentType;
    else contentType = 'text/plain; charset=utf-8';
  } else if (call.dialect) {
    const translated = call.dialect.answer(result.body, call.router.spec.name, usage.block);
    if (call.dialect.keep) await keep(call.dialect, translated, deps);
    text = JSON.stringify(translated);
  } else {
    const reported = isObject(result.body.usage) ? result.body.usage : undefined;
    if (transcript) {
      // A transcript names no model; its usage says what it counts, as OpenAI's does.
      result.body.usage = { type: 'duration', ...reported, ...usage.block };
    } else {
      result.body.model = call.router.spec.name;
      result.body.usage = reported ? { ...reported, ...usage.block } : usage.block;
    }
    text = JSON.stringify(result.body);
  }
  ended(call, { status: 200, forwarded, usage, upstreamSeconds, ttftMs: null, incomplete: false }, deps);
  reply.headers(rateLimitHeaders(call.admitted.rate)).headers(routerHeaders(call)).header('content-type', contentType);
  return text;
}

/** Where an answer that is not JSON (a transcript as text, SRT or WebVTT) carries its usage block, as JSON. */
export const USAGE_HEADER = 'x-tollgate-usage';

/**
 * Relays a stream chunk by chunk as it arrives. The backend's own usage chunk is replaced by one
 * carrying cost and carbon, sent before `[DONE]`; a stream the backend breaks off ends with an
 * SSE error event, after the usage of what was produced. A client that goes away is billed for
 * what was produced up to then. Resolves with why the stream ended early, if it did.
 */
async function relay(
  call: Call,
  forwarded: Forwarded,
  chunks: ChunkStream,
  reply: FastifyReply,
  deps: InferenceDeps,
): Promise<UpstreamError | undefined> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    ...rateLimitHeaders(call.admitted.rate),
    ...routerHeaders(call),
  });
  const translation = call.dialect?.stream(call.router.spec.name);
  const { failure, reported, first, produced, ttftMs } = await relayChunks(chunks, res, call.router.spec.name, call.startedAt, translation);
  const upstreamSeconds = (performance.now() - forwarded.sentAt) / 1000;
  // A stream cut short has no usage from the backend: what reached the client is counted.
  const usage = usageFor({
    router: call.router,
    provider: forwarded.provider,
    endpoint: call.endpoint,
    reported: failure ? undefined : reported,
    request: call.body,
    counts: call.admitted,
    completionTokens: () => produced.tokens(),
    latencySeconds: upstreamSeconds,
  });
  const ending = failure && streamEnding(failure);
  if (translation) {
    const end = ending ? translation.fail(usage.block, ending) : translation.end(usage.block);
    const final = translation.final?.();
    if (final && call.dialect?.keep) await keep(call.dialect, final, deps);
    if (!res.destroyed) res.end(end);
  } else if (!res.destroyed) {
    endStream(res, call, first, usage, ending);
  }
  const status = ending?.status ?? 200;
  ended(call, { status, forwarded, usage, upstreamSeconds, ttftMs, incomplete: failure !== undefined }, deps);
  return failure;
}

/** Which router was asked for and which served, and the budget left (budget-headers.ts). */
function routerHeaders(call: Call): Record<string, string> {
  const headers = { 'x-tollgate-requested-model': call.requested.spec.name, 'x-tollgate-served-model': call.router.spec.name };
  return putBudgetHeaders(headers, call.admitted.budget);
}

function endStream(res: ServerResponse, call: Call, first: JsonObject | undefined, usage: Usage, ending: ApiError | undefined): void {
  const usageChunk = {
    id: first?.id ?? newId('chatcmpl'),
    object: ENDPOINT_SPECS[call.endpoint].chunkObject,
    created: first?.created ?? unixSeconds(),
    model: call.router.spec.name,
    choices: [],
    usage: usage.block,
  };
  // One write for the usage chunk and the end: one system call instead of two.
  const usageEvent = `data: ${JSON.stringify(usageChunk)}\n\n`;
  if (ending) {
    res.end(`${usageEvent}data: ${JSON.stringify(ending)}\n\n`);
  } else {
    res.end(`${usageEvent}data: [DONE]\n\n`);
  }
}

/** Keeps an answer (a stored response); a store that fails loses the stored copy, never the answer. */
async function keep(dialect: Dialect, answer: JsonObject, deps: InferenceDeps): Promise<void> {
  try {
    await dialect.keep!(answer);
  } catch (error) {
    deps.log.warn({ err: error }, 'the answer could not be stored; it was still sent');
  }
}

/** A forwarded request is over: metrics, then settlement and the usage record. */
function ended(call: Call, ending: Ending, deps: InferenceDeps): void {
  const totalSeconds = (performance.now() - call.startedAt) / 1000;
  const { usage, forwarded } = ending;
  forwarded.observe({
    ttftMs: ending.ttftMs ?? ending.upstreamSeconds * 1000,
    latencyMs: ending.upstreamSeconds * 1000,
    completionTokens: usage.block.completion_tokens,
  });
  deps.outcomes.record({
    endpoint: call.endpoint,
    api: call.dialect?.api ?? 'openai',
    router: call.router,
    provider: forwarded.provider,
    status: ending.status,
    usage,
    totalSeconds,
    upstreamSeconds: ending.upstreamSeconds,
  });
  deps.billing.settleAndRecord({
    caller: call.caller,
    router: call.router,
    calledName: call.router.spec.name,
    requestedRouter: call.requested.spec.name,
    endpoint: call.endpoint,
    admitted: call.admitted,
    settled: settled({
      status: ending.status,
      provider: forwarded.provider.spec.id,
      usage,
      latencyMs: totalSeconds * 1000,
      ttftMs: ending.ttftMs,
      incomplete: ending.incomplete,
    }),
  });
}

/** A request that ended without an answer. */
interface Refusal {
  readonly endpoint: Endpoint;
  readonly request: FastifyRequest;
  readonly caller: Caller;
  /** Undefined when the model named no router. */
  readonly requested: RouterRoute | undefined;
  /** The router whose admission holds, if any: undefined when refused before or at admission. */
  readonly call: Call | undefined;
  readonly status: number;
  readonly startedAt: number;
  readonly dialect: Dialect | undefined;
}

/** A request that ended without an answer: recorded, and its hold (if any) released. */
function refused(refusal: Refusal, deps: InferenceDeps): void {
  const { endpoint, requested, call, status } = refusal;
  const router = call?.router ?? requested;
  const totalSeconds = (performance.now() - refusal.startedAt) / 1000;
  const api = refusal.dialect?.api ?? 'openai';
  deps.outcomes.record({ endpoint, api, router, provider: undefined, status, usage: undefined, totalSeconds, upstreamSeconds: undefined });
  const called = (refusal.request.body as JsonObject | null)?.model;
  deps.billing.settleAndRecord({
    caller: refusal.caller,
    router,
    calledName: typeof called === 'string' ? called.slice(0, 128) : '',
    requestedRouter: requested?.spec.name,
    endpoint,
    admitted: call?.admitted,
    settled: settled({ status, provider: null, usage: undefined, latencyMs: totalSeconds * 1000, ttftMs: null, incomplete: false }),
  });
}

/**
 * How a request ended, built once from the same usage the caller was told of: what is charged
 * and recorded is what the answer's usage block says.
 */
function settled(ending: {
  status: number;
  provider: string | null;
  usage: Usage | undefined;
  latencyMs: number;
  ttftMs: number | null;
  incomplete: boolean;
}): Settled {
  const { usage } = ending;
  return {
    status: ending.status,
    provider: ending.provider,
    promptTokens: usage?.block.prompt_tokens ?? 0,
    completionTokens: usage?.block.completion_tokens ?? 0,
    audioSeconds: usage?.block.seconds ?? 0,
    costMicros: usage?.costMicros ?? 0n,
    usageAnomaly: usage?.anomaly ?? null,
    reportedPrompt: usage?.reportedPrompt,
    kWh: usage?.block.carbon.kWh ?? 0,
    kgCO2eq: usage?.block.carbon.kgCO2eq ?? 0,
    latencyMs: ending.latencyMs,
    ttftMs: ending.ttftMs,
    incomplete: ending.incomplete,
  };
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
