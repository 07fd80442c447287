// The OpenAI-compatible inference endpoints. Each request follows the spec's flow: find the
// router (404), check its type against the endpoint (400), validate the body, charge admission
// to the caller's budget and limits (402/429), forward to a provider, and answer with the
// router's name as `model` and a `usage` block with cost and carbon. However the request ends,
// it is settled and recorded exactly once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ENDPOINT_PATHS, ENDPOINT_ROUTER_TYPES, type Endpoint } from '../../../core/resources/kinds.ts';
import { formatPath } from '../../../core/resources/consistency.ts';
import { choiceText, newId, readUsage, unixSeconds, type JsonObject } from '../../providers/openai-wire.ts';
import type { ChunkStream } from '../../providers/chunk-stream.ts';
import { countTextTokens } from '../../metering/tokens.ts';
import { relayChunks } from './stream-relay.ts';
import type { ServedRouting } from '../../routing/served-routing.ts';
import type { RouterRoute } from '../../routing/routing-table.ts';
import { finish, forward, type Forwarded, type ForwarderDeps } from '../../routing/forwarder.ts';
import { usageFor, type Usage } from '../../metering/usage-block.ts';
import type { Admitted, Billing } from '../../billing/billing.ts';
import { rateLimitHeaders } from '../rate-limit-headers.ts';
import type { Caller } from '../../accounts/caller.ts';
import { callerOf } from '../auth.ts';
import { type ApiError, errors } from '../api-error.ts';
import { statusOf, streamEnding } from '../error-map.ts';
import { REQUEST_SCHEMAS } from '../request-schemas.ts';
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
  for (const endpoint of Object.keys(ENDPOINT_PATHS) as Endpoint[]) {
    app.post(ENDPOINT_PATHS[endpoint], (request, reply) => handle(endpoint, request, reply, deps));
  }
}

async function handle(endpoint: Endpoint, request: FastifyRequest, reply: FastifyReply, deps: InferenceDeps): Promise<string | undefined> {
  const startedAt = performance.now();
  const caller = callerOf(request);
  let router: RouterRoute | undefined;
  let call: Call | undefined;
  try {
    router = route(endpoint, request.body, deps);
    if (caller.user.allowed_routers !== null && !caller.user.allowed_routers.includes(router.spec.name)) throw errors.modelNotAllowed();
    const body = request.body as JsonObject;
    const admitted = await deps.billing.admit(caller, router, endpoint, body);
    call = { endpoint, body, caller, router, admitted, startedAt, abort: new AbortController() };
    const { abort } = call;
    // The client going away cancels the upstream request, streamed or not.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const stream = (endpoint === 'chat' || endpoint === 'completions') && body.stream === true;
    const forwarded = await forward(router, endpoint, body, stream, abort.signal, deps.forwarder);
    if (forwarded.result.kind === 'body') return answer(call, forwarded, forwarded.result.body, reply, deps);
    await relay(call, forwarded, forwarded.result.chunks, reply, deps);
    return undefined;
  } catch (error) {
    refused(endpoint, request, caller, router, call?.admitted, statusOf(error), startedAt, deps);
    throw error;
  }
}

/** Steps 1 and 2 of the spec's flow, then the body's own shape. */
function route(endpoint: Endpoint, body: unknown, deps: InferenceDeps): RouterRoute {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The request body must be a JSON object');
  const model = (body as JsonObject).model;
  if (typeof model !== 'string' || model === '')
    throw errors.invalidRequest('You must provide a model parameter (a router name or alias)', 'model');
  const router = deps.routing.table.lookup(model);
  if (!router) throw errors.modelNotFound();
  if (!(ENDPOINT_ROUTER_TYPES[endpoint] as readonly string[]).includes(router.spec.type)) throw errors.wrongModelType();
  const parsed = REQUEST_SCHEMAS[endpoint].safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = formatPath(issue.path);
    throw errors.invalidRequest(`Invalid request: ${param ? `${param}: ` : ''}${issue.message}`, param || null);
  }
  return router;
}

/** A whole answer: the router's name as `model`, usage with cost and carbon added. */
function answer(call: Call, forwarded: Forwarded, body: JsonObject, reply: FastifyReply, deps: InferenceDeps): string {
  const upstreamSeconds = (performance.now() - forwarded.sentAt) / 1000;
  const usage = usageFor(
    call.router,
    forwarded.provider,
    call.endpoint,
    readUsage(body.usage),
    call.body,
    call.admitted,
    () => countTextTokens(choiceText(body)),
    upstreamSeconds,
  );
  body.model = call.router.spec.name;
  body.usage = isObject(body.usage) ? { ...body.usage, ...usage.block } : usage.block;
  finish(forwarded.provider, undefined, deps.forwarder, call.router);
  const text = JSON.stringify(body);
  ended(call, { status: 200, forwarded, usage, upstreamSeconds, ttftMs: null, incomplete: false }, deps);
  reply.headers(rateLimitHeaders(call.admitted.rate)).header('content-type', 'application/json; charset=utf-8');
  return text;
}

/**
 * Relays a stream chunk by chunk as it arrives. The backend's own usage chunk is replaced by one
 * carrying cost and carbon, sent before `[DONE]`; a stream the backend breaks off ends with an
 * SSE error event, after the usage of what was produced. A client that goes away is billed for
 * what was produced up to then.
 */
async function relay(call: Call, forwarded: Forwarded, chunks: ChunkStream, reply: FastifyReply, deps: InferenceDeps): Promise<void> {
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
  const usage = usageFor(
    call.router,
    forwarded.provider,
    call.endpoint,
    failure ? undefined : reported,
    call.body,
    call.admitted,
    () => produced.tokens(),
    upstreamSeconds,
  );
  finish(forwarded.provider, failure, deps.forwarder, call.router);
  const ending = failure && streamEnding(failure);
  if (!res.destroyed) endStream(res, call, first, usage, ending);
  const status = ending?.status ?? 200;
  ended(call, { status, forwarded, usage, upstreamSeconds, ttftMs, incomplete: failure !== undefined }, deps);
}

function endStream(res: ServerResponse, call: Call, first: JsonObject | undefined, usage: Usage, ending: ApiError | undefined): void {
  const usageChunk = {
    id: first?.id ?? newId('chatcmpl'),
    object: call.endpoint === 'chat' ? 'chat.completion.chunk' : 'text_completion',
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
  deps.outcomes.record({
    endpoint: call.endpoint,
    router: call.router,
    provider: forwarded.provider,
    status: ending.status,
    usage,
    totalSeconds,
    upstreamSeconds: ending.upstreamSeconds,
  });
  deps.billing.settle(call.caller, call.router, call.router.spec.name, call.endpoint, call.admitted, {
    status: ending.status,
    provider: forwarded.provider.spec.id,
    promptTokens: usage.block.prompt_tokens,
    completionTokens: usage.block.completion_tokens,
    costMicros: usage.costMicros,
    usageAnomaly: usage.anomaly,
    reportedPrompt: usage.reportedPrompt,
    kWh: usage.block.carbon.kWh,
    kgCO2eq: usage.block.carbon.kgCO2eq,
    latencyMs: totalSeconds * 1000,
    ttftMs: ending.ttftMs,
    incomplete: ending.incomplete,
  });
}

/** A request that ended without an answer: recorded, and its hold (if any) released. */
function refused(
  endpoint: Endpoint,
  request: FastifyRequest,
  caller: Caller,
  router: RouterRoute | undefined,
  admitted: Admitted | undefined,
  status: number,
  startedAt: number,
  deps: InferenceDeps,
): void {
  const totalSeconds = (performance.now() - startedAt) / 1000;
  deps.outcomes.record({ endpoint, router, provider: undefined, status, usage: undefined, totalSeconds, upstreamSeconds: undefined });
  const called = (request.body as JsonObject | null)?.model;
  deps.billing.settle(caller, router, typeof called === 'string' ? called.slice(0, 128) : '', endpoint, admitted, {
    status,
    provider: null,
    promptTokens: 0,
    completionTokens: 0,
    costMicros: 0n,
    usageAnomaly: null,
    reportedPrompt: undefined,
    kWh: 0,
    kgCO2eq: 0,
    latencyMs: totalSeconds * 1000,
    ttftMs: null,
    incomplete: false,
  });
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
