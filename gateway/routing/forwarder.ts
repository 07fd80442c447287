// Sends a request to one of a router's providers, failing over to another when the chosen one
// fails before anything reached the client (connection, timeout, 429, 5xx), and retrying one that
// failed for a passing reason after a growing delay. Where each attempt goes is the placer's
// choice (local or queue mode); each attempt's ending goes to the provider's circuit breaker;
// attempts are bounded in number and by the request's deadline; when all fail, ProvidersFailedError.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { promptChain } from './prefix/prompt-blocks.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { ForwardResult, PassThrough } from '../providers/adapter.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { UpstreamHttp } from '../providers/upstream-http.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { NoProviderForEndpointError, ProvidersFailedError, RequestRejectedError } from './routing-errors.ts';
import type { ProviderHealth } from './provider-health.ts';
import type { AttemptEnding, Placement, PlacementTracer, Placer } from './placement.ts';
import type { ProviderRoute, RouterRoute } from './routing-table.ts';
import { backoffMs, type BackoffPolicy } from './backoff.ts';
import { timeoutsOf, withinDeadline, type TimeoutDefaults } from '../providers/upstream-timeouts.ts';

export interface ForwarderOptions {
  /** Attempts at most for one request: the first, other providers and retries together. */
  readonly maxAttempts: number;
  /** Retries of one provider for a transient failure, where the provider sets none. */
  readonly retries: number;
  readonly backoff: BackoffPolicy;
  readonly timeouts: TimeoutDefaults;
  /** A request's deadline, from its arrival to its answer's first byte, unless the client asks for less. */
  readonly requestTimeoutMs: number;
}

export interface ForwarderDeps {
  readonly http: UpstreamHttp;
  readonly options: ForwarderOptions;
  readonly placer: Placer;
  /** Each provider's circuit breaker hears how its attempts ended (through provider health). */
  readonly breakers: Pick<ProviderHealth, 'success' | 'failure'>;
  /** Monotonic clock (ms, performance.now()), for deadlines. */
  readonly clock: () => number;
  /** Waits `ms` before a retry; rejects when `signal` aborts. Injected so tests see the delays without waiting them. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** In [0, 1), for the backoff's jitter. */
  readonly random: () => number;
  /** Told of each failed attempt (and whether it opened the provider's breaker), for metrics and logs. */
  readonly onFailure?: (router: RouterRoute, provider: ProviderRoute, error: UpstreamError, opened: boolean) => void;
  /** Told of each retry of a provider, with the delay waited before it. */
  readonly onRetry?: (router: RouterRoute, provider: ProviderRoute, delayMs: number) => void;
}

/** One upstream attempt's span in the request's trace (pipeline/request-trace.ts): its context goes to the backend. */
export interface AttemptTrace {
  /** `traceparent` (and `tracestate`) for the backend. */
  readonly headers: Record<string, string>;
  ok(): void;
  failed(error: unknown): void;
}

/** Where a traced request's attempts (and queue waits, placement.ts) are told of. */
export interface AttemptTracer extends PlacementTracer {
  /** Attempt number `attempt` of the request (1 first), the `retry`th retry of `provider` (0: not a retry). */
  attempt(router: RouterRoute, provider: ProviderRoute, attempt: number, retry: number): AttemptTrace;
}

/** One request to forward. */
export interface Forwarding {
  readonly router: RouterRoute;
  readonly endpoint: Endpoint;
  readonly body: JsonObject;
  /** The caller's own request, when made in an API all the router's providers speak (the identity translator's). */
  readonly passThrough?: PassThrough | undefined;
  readonly stream: boolean;
  readonly signal: AbortSignal;
  /** The caller's priority, for queue mode. */
  readonly priority: number;
  /** Who calls (a user id), for queue mode's fair share of a full waiting list. */
  readonly caller: string;
  /** deps.clock() time after which no attempt starts, and none waits for its first byte. */
  readonly deadline: number;
  /**
   * Only providers neither cooling down nor unhealthy are tried (a fallback router is next):
   * with none, ProvidersFailedError with no attempt. Otherwise they are tried last.
   */
  readonly onlyHealthy?: boolean;
  /** The request's trace, when tracing is on. */
  readonly trace?: AttemptTracer | undefined;
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
 * Forwards to a provider of `request.router`. An attempt that fails before the answer starts goes
 * to a provider not tried yet, at once; once every one was tried, those whose failure was
 * transient (UpstreamError.transient) are tried again after a growing delay (backoff.ts), each
 * up to its `retries`; all within `maxAttempts` and the request's deadline. On success the
 * chosen provider's slot stays taken until the caller releases it (Forwarded.release). An aborted
 * request ends, and one the backend refused as the caller's fault is rejected (neither is tried
 * again, nor a failure of the provider).
 */
export async function forward(request: Forwarding, deps: ForwarderDeps): Promise<Forwarded> {
  const { router, endpoint, body, passThrough, stream, signal, deadline } = request;
  const { options } = deps;
  const candidates = router.byEndpoint.get(endpoint);
  if (!candidates) throw new NoProviderForEndpointError(router.spec.name, ENDPOINT_SPECS[endpoint].path);
  // Providers that serve the endpoint but have no replica now (a Service without a ready endpoint): as when every one is down.
  if (candidates.length === 0)
    throw new ProvidersFailedError(
      router.spec.name,
      0,
      new UpstreamError('connect', 'no replica is ready (the Service has no ready endpoint)'),
    );
  const tried = new Set<ProviderRoute>();
  // Prefix affinity reads the prompt's blocks, worked out once for all the attempts; other strategies never do.
  let chain: readonly string[] | undefined;
  const prompt = router.spec.load_balancing_strategy === 'prefix_affinity' ? () => (chain ??= promptChain(endpoint, body)) : undefined;
  /** Providers whose last failure was transient, with that failure (its retry-after). */
  let retryable: Map<ProviderRoute, UpstreamError> | undefined;
  let retriesUsed: Map<ProviderRoute, number> | undefined;
  let round = 0;
  let attempts = 0;
  let last: UpstreamError | undefined;
  /** When the failing providers' breakers let a probe through, once a last resort failed. */
  let retryAfterMs: number | undefined;
  while (attempts < options.maxAttempts && deps.clock() < deadline) {
    if (tried.size === candidates.length) {
      // Every provider was tried: those that may be retried go back in, after a delay.
      const again = [...(retryable ?? [])].filter(([provider]) => (retriesUsed?.get(provider) ?? 0) < retriesOf(provider, options));
      if (again.length === 0) break;
      round++;
      const delay = retryDelay(again, round, deps);
      if (delay === undefined || deps.clock() + delay >= deadline) break;
      await waitBeforeRetry(delay, signal, deps);
      retriesUsed ??= new Map();
      for (const [provider] of again) {
        tried.delete(provider);
        retryable!.delete(provider);
        retriesUsed.set(provider, (retriesUsed.get(provider) ?? 0) + 1);
        deps.onRetry?.(router, provider, delay);
      }
    }
    let placement: Placement;
    try {
      // Local mode places at once: no promise is made for it on the request path.
      const placed = deps.placer.place({
        router,
        endpoint,
        candidates,
        tried,
        signal,
        priority: request.priority,
        caller: request.caller,
        onlyHealthy: request.onlyHealthy ?? false,
        deadline,
        prompt,
        trace: request.trace,
      });
      placement = placed instanceof Promise ? await placed : placed;
    } catch (error) {
      // A placer with no provider left for the request says so as the attempts' failure.
      if (error instanceof ProvidersFailedError && attempts > 0)
        throw new ProvidersFailedError(router.spec.name, attempts, last, error.retryAfterMs);
      throw error;
    }
    const { provider } = placement;
    tried.add(provider);
    attempts++;
    const sentAt = performance.now();
    const traced = request.trace?.attempt(router, provider, attempts, retriesUsed?.get(provider) ?? 0);
    try {
      const timeouts = withinDeadline(timeoutsOf(provider.spec, options.timeouts), deadline - deps.clock());
      const result = await provider.adapter.forward(
        provider.spec,
        {
          endpoint,
          body: { ...body, model: provider.spec.model_name },
          stream,
          signal,
          timeouts,
          passThrough: passThrough && { api: passThrough.api, body: { ...passThrough.body, model: provider.spec.model_name } },
          priority: request.priority,
          traceHeaders: traced?.headers,
        },
        deps.http,
      );
      traced?.ok();
      deps.breakers.success(router, provider);
      return answered(router, provider, placement.release, result, attempts, sentAt, deps);
    } catch (error) {
      traced?.failed(error);
      const blameless = !(error instanceof UpstreamError) || error.failure === 'aborted' || error.blamesClient;
      placement.release({ failure: error instanceof UpstreamError ? error : undefined, blameless });
      if (!(error instanceof UpstreamError)) throw error;
      if (error.failure === 'aborted') throw error;
      if (error.blamesClient) throw new RequestRejectedError(error);
      deps.onFailure?.(router, provider, error, deps.breakers.failure(router, provider, error));
      last = error;
      // The adapter's one decision: whether another provider (or this one again) might do better.
      if (!error.retryable) break;
      // A last resort failing (every breaker open): no more calls to providers that are failing.
      if (placement.lastResort) {
        retryAfterMs = placement.lastResort.retryAfterMs;
        break;
      }
      if (error.transient) {
        retryable ??= new Map();
        retryable.set(provider, error);
      }
    }
  }
  if (attempts === 0 && deps.clock() >= deadline)
    last = new UpstreamError('timeout', "the request's deadline passed before a provider was tried");
  throw new ProvidersFailedError(router.spec.name, attempts, last, retryAfterMs);
}

function retriesOf(provider: ProviderRoute, options: ForwarderOptions): number {
  return provider.spec.retries ?? options.retries;
}

/**
 * The delay before retry round `round`: the backoff, or longer when a backend asked for it
 * (`retry-after`) and the wait is short enough to honour; undefined when one asked for longer
 * than that (the providers are then left alone).
 */
function retryDelay(again: readonly [ProviderRoute, UpstreamError][], round: number, deps: ForwarderDeps): number | undefined {
  const { backoff } = deps.options;
  let delay = backoffMs(backoff, round, deps.random());
  for (const [, error] of again) {
    const asked = error.retryAfterMs;
    if (asked === undefined) continue;
    if (asked > backoff.retryAfterMaxMs) return undefined;
    delay = Math.max(delay, asked);
  }
  return delay;
}

async function waitBeforeRetry(ms: number, signal: AbortSignal, deps: ForwarderDeps): Promise<void> {
  try {
    await deps.sleep(ms, signal);
  } catch (error) {
    if (signal.aborted) throw new UpstreamError('aborted', 'the request was cancelled');
    throw error;
  }
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
      if (failure && !blameless) deps.onFailure?.(router, provider, failure, deps.breakers.failure(router, provider, failure));
    },
  };
}
