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
import { choiceText, newId, readUsage, unixSeconds, type JsonObject } from '../../providers/openai-wire.ts';
import type { ChunkStream } from '../../providers/chunk-stream.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { countTextTokens } from '../../metering/tokens.ts';
import { relayChunks } from './stream-relay.ts';
import type { ServedRouting } from '../../routing/served-routing.ts';
import type { RouterRoute } from '../../routing/routing-table.ts';
import { forward, type Forwarded, type ForwarderDeps } from '../../routing/forwarder.ts';
import { usageFor, type Usage } from '../../metering/usage-block.ts';
import type { Admitted, Billing, Settled } from '../../billing/billing.ts';
import { rateLimitHeaders } from '../rate-limit-headers.ts';
import type { Caller } from '../../accounts/caller.ts';
import { callerOf } from '../auth.ts';
import { type ApiError, errors } from '../api-error.ts';
import { statusOf, streamEnding } from '../error-map.ts';
import type { OutcomeRecorder } from './request-outcome.ts';

export interface InferenceDeps {
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
  readonly caller: Caller;
  readonly router: RouterRoute;
  readonly admitted: Admitted;
  readonly startedAt: number;
  readonly abort: AbortController;
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
    app.post(ENDPOINT_SPECS[endpoint].path, (request, reply) => handle(endpoint, request, reply, deps));
  }
}

async function handle(endpoint: Endpoint, request: FastifyRequest, reply: FastifyReply, deps: InferenceDeps): Promise<string | undefined> {
  const startedAt = performance.now();
  const caller = callerOf(request);
  let router: RouterRoute | undefined;
  let call: Call | undefined;
  try {
    const routed = route(endpoint, request.body, deps);
    router = routed.router;
    const { body } = routed;
    if (caller.user.allowed_routers !== null && !caller.user.allowed_routers.includes(router.spec.name)) throw errors.modelNotAllowed();
    const admitted = await deps.billing.admit(caller, router, endpoint, body);
    call = { endpoint, body, caller, router, admitted, startedAt, abort: new AbortController() };
    const { abort } = call;
    // The client going away cancels the upstream request, streamed or not.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const stream = ENDPOINT_SPECS[endpoint].streams(body);
    const forwarded = await forward(
      { router, endpoint, body, stream, signal: abort.signal, priority: caller.user.priority ?? 0 },
      deps.forwarder,
    );
    let failure: UpstreamError | undefined;
    try {
      if (forwarded.result.kind === 'body') return answer(call, forwarded, forwarded.result.body, reply, deps);
      failure = await relay(call, forwarded, forwarded.result.chunks, reply, deps);
      return undefined;
    } catch (error) {
      if (error instanceof UpstreamError) failure = error;
      throw error;
    } finally {
      forwarded.release(failure);
    }
  } catch (error) {
    refused({ endpoint, request, caller, router, admitted: call?.admitted, status: statusOf(error), startedAt }, deps);
    throw error;
  }
}

/** Steps 1 and 2 of the spec's flow, then the body's own shape: the router, and the body as its endpoint's schema parsed it. */
function route(endpoint: Endpoint, body: unknown, deps: InferenceDeps): { router: RouterRoute; body: JsonObject } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The request body must be a JSON object');
  const model = (body as JsonObject).model;
  if (typeof model !== 'string' || model === '')
    throw errors.invalidRequest('You must provide a model parameter (a router name or alias)', 'model');
  const router = deps.routing.table.lookup(model);
  if (!router) throw errors.modelNotFound();
  const spec = ENDPOINT_SPECS[endpoint];
  if (!spec.routerTypes.includes(router.spec.type)) throw errors.wrongModelType();
  const parsed = spec.schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = formatPath(issue.path);
    throw errors.invalidRequest(`Invalid request: ${param ? `${param}: ` : ''}${issue.message}`, param || null);
  }
  return { router, body: parsed.data };
}

/** A whole answer: the router's name as `model`, usage with cost and carbon added. */
function answer(call: Call, forwarded: Forwarded, body: JsonObject, reply: FastifyReply, deps: InferenceDeps): string {
  const upstreamSeconds = (performance.now() - forwarded.sentAt) / 1000;
  const usage = usageFor({
    router: call.router,
    provider: forwarded.provider,
    endpoint: call.endpoint,
    reported: readUsage(body.usage),
    request: call.body,
    counts: call.admitted,
    completionTokens: () => countTextTokens(choiceText(body)),
    latencySeconds: upstreamSeconds,
  });
  body.model = call.router.spec.name;
  body.usage = isObject(body.usage) ? { ...body.usage, ...usage.block } : usage.block;
  const text = JSON.stringify(body);
  ended(call, { status: 200, forwarded, usage, upstreamSeconds, ttftMs: null, incomplete: false }, deps);
  reply.headers(rateLimitHeaders(call.admitted.rate)).header('content-type', 'application/json; charset=utf-8');
  return text;
}

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
  });
  const { failure, reported, first, produced, ttftMs } = await relayChunks(chunks, res, call.router.spec.name, call.startedAt);
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
  if (!res.destroyed) endStream(res, call, first, usage, ending);
  const status = ending?.status ?? 200;
  ended(call, { status, forwarded, usage, upstreamSeconds, ttftMs, incomplete: failure !== undefined }, deps);
  return failure;
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
  readonly router: RouterRoute | undefined;
  /** Undefined when it was refused before or at admission. */
  readonly admitted: Admitted | undefined;
  readonly status: number;
  readonly startedAt: number;
}

/** A request that ended without an answer: recorded, and its hold (if any) released. */
function refused(refusal: Refusal, deps: InferenceDeps): void {
  const { endpoint, router, status } = refusal;
  const totalSeconds = (performance.now() - refusal.startedAt) / 1000;
  deps.outcomes.record({ endpoint, router, provider: undefined, status, usage: undefined, totalSeconds, upstreamSeconds: undefined });
  const called = (refusal.request.body as JsonObject | null)?.model;
  deps.billing.settleAndRecord({
    caller: refusal.caller,
    router,
    calledName: typeof called === 'string' ? called.slice(0, 128) : '',
    endpoint,
    admitted: refusal.admitted,
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
