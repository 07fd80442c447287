// Sends a request to one of a router's providers, failing over to another when the chosen one
// fails before anything reached the client (connection, timeout, 429, 5xx). A provider that
// keeps failing sits out a cool-down; attempts are bounded; when all fail, ProvidersFailedError.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { ForwardResult } from '../providers/adapter.ts';
import type { JsonObject } from '../providers/openai-wire.ts';
import type { UpstreamHttp } from '../providers/upstream-http.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { NoProviderForEndpointError, ProvidersFailedError, RequestRejectedError } from './routing-errors.ts';
import type { FailurePolicy } from './provider-state.ts';
import type { Random } from './strategies.ts';
import type { ProviderRoute, RouterRoute } from './routing-table.ts';

export interface ForwarderOptions extends FailurePolicy {
  /** Providers tried at most for one request. */
  readonly maxAttempts: number;
}

export interface ForwarderDeps {
  readonly http: UpstreamHttp;
  readonly options: ForwarderOptions;
  readonly random: Random;
  readonly now: () => number;
  /** Told of each failed attempt, for metrics and logs. */
  readonly onFailure?: (router: RouterRoute, provider: ProviderRoute, error: UpstreamError, coolingDown: boolean) => void;
}

export interface Forwarded {
  readonly provider: ProviderRoute;
  readonly result: ForwardResult;
  readonly attempts: number;
  /** performance.now() when the successful attempt was sent. */
  readonly sentAt: number;
  /**
   * Gives back the provider's in-flight slot, recording `failure` (a stream the backend broke off)
   * against it. Call it once the answer is over, however it ended (one `finally`); calls after
   * the first do nothing.
   */
  release(failure?: UpstreamError): void;
}

/**
 * Forwards to a provider of `router`. On success the chosen provider's in-flight slot stays taken
 * until the caller releases it (Forwarded.release). The adapter's `retryable` decides whether
 * another provider is tried; an aborted request ends, and one the backend refused as the caller's
 * fault is rejected (neither is retryable, nor a failure of the provider).
 */
export async function forward(
  router: RouterRoute,
  endpoint: Endpoint,
  body: JsonObject,
  stream: boolean,
  signal: AbortSignal,
  deps: ForwarderDeps,
): Promise<Forwarded> {
  const candidates = router.byEndpoint.get(endpoint);
  if (!candidates || candidates.length === 0) throw new NoProviderForEndpointError(router.spec.name, ENDPOINT_SPECS[endpoint].path);
  const tried = new Set<ProviderRoute>();
  let last: UpstreamError | undefined;
  while (tried.size < Math.min(candidates.length, deps.options.maxAttempts)) {
    const provider = choose(router, candidates, tried, deps);
    tried.add(provider);
    provider.state.inFlight++;
    const sentAt = performance.now();
    try {
      const result = await provider.adapter.forward(
        provider.spec,
        { endpoint, body: { ...body, model: provider.spec.model_name }, stream, signal },
        deps.http,
      );
      provider.state.recordSuccess();
      return { provider, result, attempts: tried.size, sentAt, release: releaser(router, provider, deps) };
    } catch (error) {
      provider.state.inFlight--;
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

/** Releases the provider's slot once, recording how its answer ended. */
function releaser(router: RouterRoute, provider: ProviderRoute, deps: ForwarderDeps): (failure?: UpstreamError) => void {
  let released = false;
  return (failure) => {
    if (released) return;
    released = true;
    provider.state.inFlight--;
    if (failure && failure.failure !== 'aborted') {
      deps.onFailure?.(router, provider, failure, provider.state.recordFailure(deps.now(), deps.options));
    }
  };
}

/** Healthy untried providers first; cooling ones only when nothing else is left. */
function choose(
  router: RouterRoute,
  candidates: readonly ProviderRoute[],
  tried: ReadonlySet<ProviderRoute>,
  deps: ForwarderDeps,
): ProviderRoute {
  const now = deps.now();
  let untried = candidates;
  if (tried.size > 0) untried = candidates.filter((p) => !tried.has(p));
  const healthy = untried.filter((p) => !p.state.isCooling(now));
  return router.pick(router, healthy.length > 0 ? healthy : untried, deps.random);
}
