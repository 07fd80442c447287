// The request pipeline: it owns an inference request from the moment the transport hands it over
// to its settlement, through explicit stages, whatever API it came in:
//   resolve    the router (404, 400) and the body in the endpoint's form (resolve.ts); a
//              transcription's audio read once its caller may call the router and pay (audio-reading.ts)
//   authorize  the caller may call the router (403)
//   admit      the caller's budget and limits hold the worst case (402, 429; billing/)
//   dispatch   the router chain (fallbacks, routing/fallback-chain.ts), then the forwarder and placement
//   respond    the whole answer or the stream, in the caller's API (answer-whole.ts, answer-stream.ts)
//   meter and settle, exactly once however it ends (settle.ts)
// The transport (gateway/http/) is reached only through an AnswerChannel; this folder never
// imports it, so another transport or a test drives the same pipeline.
import { mayCall } from '../accounts/caller.ts';
import type { Admitted, Billing } from '../billing/billing.ts';
import { ContextLengthError, InsufficientBudgetError, RateLimitedError } from '../billing/billing-errors.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import { errors } from '../api/api-error.ts';
import { statusOf } from './error-map.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { serveWithFallbacks, type Refusal as ChainRefusal } from '../routing/fallback-chain.ts';
import { forward, type Forwarded, type ForwarderDeps } from '../routing/forwarder.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { AnswerChannel, WholeAnswer } from './answer-channel.ts';
import { answerStream } from './answer-stream.ts';
import { answerWhole } from './answer-whole.ts';
import type { InferenceSurface } from './api-surfaces.ts';
import type { SurfaceRequest, SurfaceServices } from './surface-request.ts';
import { forwarding, type Call, type Started } from './inference-call.ts';
import type { Keeping } from './conversation.ts';
import type { OutcomeRecorder } from './request-outcome.ts';
import { resolve, resolveTranslated, routerOf, timeoutMs } from './resolve.ts';
import { withAudioRead, type AudioReading } from './audio-reading.ts';
import { refused } from './settle.ts';
import type { Tracing } from '../../core/telemetry/tracing.ts';
import { endAdmission, RequestTrace } from './request-trace.ts';

export interface PipelineDeps extends SurfaceServices, Keeping, AudioReading {
  readonly forwarder: ForwarderDeps;
  readonly outcomes: OutcomeRecorder;
  readonly billing: Billing;
  /** OpenTelemetry tracing, when it is on (core/telemetry/): each request is then traced (request-trace.ts). */
  readonly tracing?: Tracing | undefined;
}

export class RequestPipeline {
  readonly #deps: PipelineDeps;

  constructor(deps: PipelineDeps) {
    this.#deps = deps;
  }

  /** Whether requests are traced (the transport then times authentication). */
  get traced(): boolean {
    return this.#deps.tracing !== undefined;
  }

  /** What the surfaces that answer by themselves use. */
  get services(): SurfaceServices {
    return this.#deps;
  }

  /**
   * Serves one request of `surface`: resolves with the whole answer, or with undefined once a
   * streamed answer is over (written to the channel). Throws an error for the transport to answer
   * in the surface's envelope (error-map.ts), the request already settled.
   */
  async serve(surface: InferenceSurface, request: SurfaceRequest, channel: AnswerChannel): Promise<WholeAnswer | undefined> {
    const startedAt = performance.now();
    const deps = this.#deps;
    const { endpoint } = surface;
    const { caller } = request;
    let requested: RouterRoute | undefined;
    let call: Call | undefined;
    const trace =
      deps.tracing &&
      new RequestTrace(deps.tracing, {
        endpoint,
        api: surface.api,
        headers: request.headers,
        arrivedAt: request.authTiming?.[0] ?? startedAt,
        authenticatedAt: request.authTiming?.[1],
        caller,
      });
    try {
      // resolve
      if (surface.multipart) requested = routerOf(endpoint, request.body, deps.routing);
      const body = requested ? await withAudioRead(request.body, requested, caller, deps) : request.body;
      const resolved =
        surface.schemas === undefined ? resolve(endpoint, body, deps.routing) : await resolveTranslated(surface, request, deps);
      requested = resolved.router;
      trace?.resolved(requested, request.body);
      // authorize
      if (!mayCall(caller, requested.spec.name)) throw errors.modelNotAllowed();
      const abort = new AbortController();
      // The client going away cancels the upstream request, streamed or not.
      channel.onClientGone(() => abort.abort());
      const started: Started = {
        endpoint,
        body: resolved.body,
        api: surface.api,
        passThrough: resolved.passThrough,
        conversation: resolved.conversation,
        caller,
        requested,
        startedAt,
        abort,
        stream: ENDPOINT_SPECS[endpoint].streams(resolved.body),
        deadline: startedAt + timeoutMs(request.timeout, deps.forwarder.options.requestTimeoutMs),
        trace,
      };
      // admit and dispatch
      let forwarded: Forwarded;
      if (requested.fallbacks.length === 0) {
        const admitted = await traced(trace, requested, () => deps.billing.admit(caller, requested!, endpoint, resolved.body));
        call = { ...started, router: requested, admitted };
        forwarded = await forward(forwarding(call, requested, false), deps.forwarder);
      } else {
        forwarded = await this.#withFallbacks(started, (served) => {
          call = served;
        });
      }
      // respond, meter and settle
      const served = call!;
      let failure: UpstreamError | undefined;
      try {
        if (forwarded.result.kind !== 'stream') return await answerWhole(served, forwarded, forwarded.result, deps);
        failure = await answerStream(served, forwarded, forwarded.result.chunks, forwarded.result.api ?? 'openai', channel, deps);
        return undefined;
      } catch (error) {
        if (error instanceof UpstreamError) failure = error;
        throw error;
      } finally {
        forwarded.release(failure);
      }
    } catch (error) {
      const status = statusOf(error);
      refused({ endpoint, api: surface.api, body: request.body, caller, requested, call, status, startedAt, error, trace }, deps);
      throw error;
    }
  }

  /** Dispatch through the router's chain, each router admitted on its own; `onCall` hears the router in use, for settlement. */
  #withFallbacks(start: Started, onCall: (call: Call | undefined) => void): Promise<Forwarded> {
    const deps = this.#deps;
    const { endpoint, body, caller, requested } = start;
    const chain = [
      requested,
      ...requested.fallbacks.filter((r) => ENDPOINT_SPECS[endpoint].routerTypes.includes(r.spec.type) && mayCall(caller, r.spec.name)),
    ];
    return serveWithFallbacks<Admitted>(chain, requested.contextFallback, start.deadline, deps.forwarder.clock, {
      admit: (router, overflowAllowed) =>
        traced(start.trace, router, () => deps.billing.admit(caller, router, endpoint, body, overflowAllowed)),
      release: (admitted) => deps.billing.release(caller, admitted),
      forward: (router, _admitted, onlyHealthy) => forward(forwarding(start, router, onlyHealthy), deps.forwarder),
      refusal: refusalOf,
      fellBack: (from, to, reason) => {
        deps.outcomes.fellBack(from, to, reason);
        start.trace?.fellBack(from, to, reason);
      },
      serving: (router, admitted) => onCall(router && admitted ? { ...start, router, admitted } : undefined),
    });
  }
}

/** Admission on `router`, in its own span when the request is traced: the levels held, or who refused and why. */
function traced(trace: RequestTrace | undefined, router: RouterRoute, admit: () => Promise<Admitted>): Promise<Admitted> {
  if (trace === undefined || !trace.recording) return admit();
  const span = trace.admitting(router);
  return admit().then(
    (admitted) => {
      endAdmission(span, { levels: ['user', ...(admitted.levels ?? []).map((other) => other.level)] });
      return admitted;
    },
    (error: unknown) => {
      endAdmission(span, refusalAttributes(error));
      throw error;
    },
  );
}

function refusalAttributes(error: unknown): { refusal: string; refusedLevel?: string } {
  if (error instanceof InsufficientBudgetError) return { refusal: 'budget', refusedLevel: error.level };
  if (error instanceof RateLimitedError) return { refusal: `rate_limit:${error.limit}`, refusedLevel: error.level };
  if (error instanceof ContextLengthError) return { refusal: 'context_length' };
  return { refusal: error instanceof Error ? error.name : 'error' };
}

/** How admission's refusals count for the fallback chain. */
function refusalOf(error: unknown): ChainRefusal | undefined {
  if (error instanceof ContextLengthError) return 'context';
  if (error instanceof InsufficientBudgetError || error instanceof RateLimitedError) return 'caller';
  return undefined;
}
