// Sends a request to one of a router's providers, failing over to another when the chosen one
// fails before anything reached the client (connection, timeout, 429, 5xx). Where each attempt
// goes is the placer's choice (local or queue mode); a provider that keeps failing sits out a
// cool-down; attempts are bounded; when all fail, ProvidersFailedError.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { ForwardResult } from '../providers/adapter.ts';
import type { JsonObject } from '../providers/openai-wire.ts';
import type { UpstreamHttp } from '../providers/upstream-http.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { NoProviderForEndpointError, ProvidersFailedError, RequestRejectedError } from './routing-errors.ts';
import type { FailurePolicy } from './provider-state.ts';
import type { AttemptEnding, Placement, Placer } from './placement.ts';
import type { ProviderRoute, RouterRoute } from './routing-table.ts';

export interface ForwarderOptions extends FailurePolicy {
  /** Providers tried at most for one request. */
  readonly maxAttempts: number;
}

export interface ForwarderDeps {
  readonly http: UpstreamHttp;
  readonly options: ForwarderOptions;
  readonly placer: Placer;
  readonly now: () => number;
  /** Told of each failed attempt, for metrics and logs. */
  readonly onFailure?: (router: RouterRoute, provider: ProviderRoute, error: UpstreamError, coolingDown: boolean) => void;
}

/** One request to forward. */
export interface Forwarding {
  readonly router: RouterRoute;
  readonly endpoint: Endpoint;
  readonly body: JsonObject;
  readonly stream: boolean;
  readonly signal: AbortSignal;
  /** The caller's priority, for queue mode. */
  readonly priority: number;
}

/** How the answer went, for the provider's numbers (lowest_latency, queue mode's fleet-wide metrics). */
export type AnswerTiming = Pick<AttemptEnding, 'ttftMs' | 'latencyMs' | 'completionTokens'>;

export interface Forwarded {
  readonly provider: ProviderRoute;
  readonly result: ForwardResult;
  readonly attempts: number;
  /** performance.now() when the successful attempt was sent. */
  readonly sentAt: number;
  /** Notes how the answer went, before release. */
  observe(timing: AnswerTiming): void;
  /**
   * Gives back the provider's slot, recording `failure` (a stream the backend broke off)
   * against it. Call it once the answer is over, however it ended (one `finally`); calls after
   * the first do nothing.
   */
  release(failure?: UpstreamError): void;
}

/**
 * Forwards to a provider of `request.router`. On success the chosen provider's slot stays taken
 * until the caller releases it (Forwarded.release). The adapter's `retryable` decides whether
 * another provider is tried; an aborted request ends, and one the backend refused as the caller's
 * fault is rejected (neither is retryable, nor a failure of the provider).
 */
export async function forward(request: Forwarding, deps: ForwarderDeps): Promise<Forwarded> {
  const { router, endpoint, body, stream, signal } = request;
  const candidates = router.byEndpoint.get(endpoint);
  if (!candidates || candidates.length === 0) throw new NoProviderForEndpointError(router.spec.name, ENDPOINT_SPECS[endpoint].path);
  const tried = new Set<ProviderRoute>();
  let last: UpstreamError | undefined;
  while (tried.size < Math.min(candidates.length, deps.options.maxAttempts)) {
    let placement: Placement;
    try {
      // Local mode places at once: no promise is made for it on the request path.
      const placed = deps.placer.place({ router, endpoint, candidates, tried, signal, priority: request.priority });
      placement = placed instanceof Promise ? await placed : placed;
    } catch (error) {
      // A placer with no provider left for the request says so as the attempts' failure.
      if (error instanceof ProvidersFailedError && tried.size > 0) throw new ProvidersFailedError(router.spec.name, tried.size, last);
      throw error;
    }
    const { provider } = placement;
    tried.add(provider);
    const sentAt = performance.now();
    try {
      const result = await provider.adapter.forward(
        provider.spec,
        { endpoint, body: { ...body, model: provider.spec.model_name }, stream, signal },
        deps.http,
      );
      provider.state.recordSuccess();
      return answered(router, provider, placement.release, result, tried.size, sentAt, deps);
    } catch (error) {
      const blameless = !(error instanceof UpstreamError) || error.failure === 'aborted' || error.blamesClient;
      placement.release({ failure: error instanceof UpstreamError ? error : undefined, blameless });
      if (!(error instanceof UpstreamError)) throw error;
      if (error.failure === 'aborted') throw error;
      if (error.blamesClient) throw new RequestRejectedError(error);
      const coolingDown = provider.state.recordFailure(deps.now(), deps.options);
      deps.onFailure?.(router, provider, error, coolingDown);
      last = error;
      // The adapter's one decision: whether another provider might do better.
      if (!error.retryable) break;
    }
  }
  throw new ProvidersFailedError(router.spec.name, tried.size, last);
}

function answered(
  router: RouterRoute,
  provider: ProviderRoute,
  release: (ending: AttemptEnding) => void,
  result: ForwardResult,
  attempts: number,
  sentAt: number,
  deps: ForwarderDeps,
): Forwarded {
  let timing: AnswerTiming = {};
  let released = false;
  return {
    provider,
    result,
    attempts,
    sentAt,
    observe(observed) {
      timing = observed;
    },
    release(failure) {
      if (released) return;
      released = true;
      const blameless = failure?.failure === 'aborted';
      release({ ...timing, failure, blameless });
      if (failure && !blameless) deps.onFailure?.(router, provider, failure, provider.state.recordFailure(deps.now(), deps.options));
    },
  };
}
