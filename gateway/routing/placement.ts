// Where a request's attempt goes: a provider of its router, with a slot taken on it until the
// attempt (or the answer) ends. Local mode chooses in this process (LocalPlacer); queue mode asks
// the router workers (gateway/queue/queue-placer.ts). The forwarder only sees this interface.
// Local placement is where more signals join the choice (docs/architecture.md, "Adding a routing
// signal"): the scorers it is built with keep the candidates they prefer before the router's
// strategy picks among them.
import type { Endpoint } from '../../core/resources/kinds.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import type { BreakerPolicy } from './circuit-breaker.ts';
import { ModelTooBusyError, ProvidersFailedError } from './routing-errors.ts';
import { keepBest, type ProviderScorer } from './scoring.ts';
import type { Random } from './strategies.ts';
import type { ProviderRoute, RouterRoute } from './routing-table.ts';

/** How an attempt or an answer ended on its provider. */
export interface AttemptEnding {
  /** Why it failed, when it did (a failure before the answer, or a stream broken off). */
  readonly failure?: UpstreamError | undefined;
  /** The provider is not to blame (the client went away, or the request was refused as the caller's). */
  readonly blameless?: boolean;
  /** Time to first token (ms); for an answer not streamed, the time to the whole answer. */
  readonly ttftMs?: number | undefined;
  readonly latencyMs?: number | undefined;
  readonly completionTokens?: number | undefined;
}

export interface Placement {
  readonly provider: ProviderRoute;
  /**
   * Placed although its breaker is open, no provider being ready: a failure ends the request's
   * attempts, and the caller is told when a breaker lets a probe through (ms from now), if known.
   */
  readonly lastResort?: { readonly retryAfterMs: number | undefined };
  /** Gives the slot back, with how the attempt ended; calls after the first do nothing. */
  release(ending: AttemptEnding): void;
}

export interface PlaceRequest {
  readonly router: RouterRoute;
  readonly endpoint: Endpoint;
  /** The router's providers that serve the endpoint. */
  readonly candidates: readonly ProviderRoute[];
  /** Providers this request already tried (and that failed). */
  readonly tried: ReadonlySet<ProviderRoute>;
  readonly signal: AbortSignal;
  /** The caller's priority (queue mode orders waiting requests by it). */
  readonly priority: number;
  /** Who calls (a user id): queue mode shares a full waiting list fairly between callers. */
  readonly caller: string;
  /** Providers cooling down or unhealthy are not placed on, even when no other is left (a fallback router is next). */
  readonly onlyHealthy: boolean;
  /** performance.now() time past which the request must not wait for a slot (its deadline). */
  readonly deadline: number;
  /** The prompt as a chain of block hashes (prefix/prompt-blocks.ts), worked out when first asked; absent for endpoints without a prompt to cache. */
  readonly prompt?: (() => readonly string[]) | undefined;
  /** prefix_affinity: how many of the prompt's leading blocks each candidate probably holds (prefix/prefix-affinity.ts). */
  readonly matched?: ReadonlyMap<ProviderRoute, number> | undefined;
  /** The request's trace, when tracing is on: queue mode's wait is a span of it. */
  readonly trace?: PlacementTracer | undefined;
}

/** A traced request's wait in its router's queue (queue mode): ended with what the workers answered. */
export interface QueueWaitTrace {
  /** The wait's W3C traceparent, carried by the queue entry: the router worker's answer is its child. */
  readonly traceparent: string | undefined;
  /** `outcome`: ok (a slot on `provider`), busy, none, aborted or unavailable. */
  answered(outcome: string, provider?: string): void;
}

export interface PlacementTracer {
  /** The request waits in `router`'s queue with `priority`, at most `maxWaitMs`. */
  queued(router: RouterRoute, priority: number, maxWaitMs: number): QueueWaitTrace;
}

/** A scorer local placement applies to a request's candidates before the router's strategy. */
export type PlacementScorer = ProviderScorer<ProviderRoute, PlaceRequest>;

/** What local placement asks of prefix-cache affinity (prefix/prefix-affinity.ts). */
export interface PlacementAffinity {
  /** Whether `request` is placed with affinity. */
  applies(request: PlaceRequest): boolean;
  /** The blocks of the prompt (its chain) each candidate probably holds. */
  matched(candidates: readonly ProviderRoute[], chain: readonly string[]): Promise<ReadonlyMap<ProviderRoute, number>>;
  /** The replica chosen for the chain. */
  chosen(replica: ProviderRoute, chain: readonly string[]): void;
  /** Keeps the candidates that hold the most of the prompt (request.matched), before the others. */
  readonly scorer: PlacementScorer;
}

export interface Placer {
  /** A provider with a slot taken, or a rejection: ModelTooBusyError, ProvidersFailedError (none left), QueueUnavailableError. */
  place(request: PlaceRequest): Placement | Promise<Placement>;
}

/**
 * Local mode: the router's strategy picks among untried providers that are live (health checks)
 * and whose breaker lets a request through, on this process's own counts; with none of those,
 * unless the request must only go to ready ones (a fallback router is next), one live provider
 * whose breaker is open, as a last resort (the backend may be back): that attempt is the
 * request's last, so a request never makes more than one call to providers that are failing. A
 * provider the health checks took out is never chosen. A provider's max_concurrent caps this
 * process's requests on it; 0 closes it. `scorers`, in turn, keep the candidates they prefer
 * before the strategy picks (none: the strategy alone, at no cost).
 */
export class LocalPlacer implements Placer {
  readonly #random: Random;
  readonly #now: () => number;
  readonly #policy: BreakerPolicy;
  readonly #scorers: readonly PlacementScorer[];
  readonly #affinity: PlacementAffinity | undefined;
  readonly #placed: ((provider: ProviderRoute) => void) | undefined;

  /** `placed` hears each provider chosen (engine signals count the requests sent since their reading). */
  constructor(
    random: Random,
    now: () => number,
    policy: BreakerPolicy,
    scorers: readonly PlacementScorer[] = [],
    affinity?: PlacementAffinity,
    placed?: (provider: ProviderRoute) => void,
  ) {
    this.#random = random;
    this.#now = now;
    this.#policy = policy;
    this.#scorers = scorers;
    this.#affinity = affinity;
    this.#placed = placed;
  }

  /** At once, but for a prefix_affinity router's request, which first asks the prefix index (one round trip with Redis). */
  place(request: PlaceRequest): Placement | Promise<Placement> {
    const affinity = this.#affinity;
    if (affinity === undefined || !affinity.applies(request)) return this.placeNow(request);
    return this.#placeByPrefix(request, affinity);
  }

  async #placeByPrefix(request: PlaceRequest, affinity: PlacementAffinity): Promise<Placement> {
    const chain = request.prompt!();
    const matched = await affinity.matched(request.candidates, chain);
    const placement = this.placeNow({ ...request, matched });
    // What affinity predicted for the replica chosen, counted for the routing view and /metrics.
    placement.provider.state.countPrefix(matched.get(placement.provider) ?? 0, chain.length);
    affinity.chosen(placement.provider, chain);
    return placement;
  }

  /** Places on what this process knows now. */
  placeNow(request: PlaceRequest): Placement {
    const { router, candidates, tried, onlyHealthy } = request;
    const now = this.#now();
    let untried = candidates;
    if (tried.size > 0) untried = candidates.filter((p) => !tried.has(p));
    const open = untried.filter(hasRoom);
    if (open.length === 0) throw new ModelTooBusyError(router.spec.name, 1, 'every provider is at its max_concurrent in this gateway');
    const ready = open.filter((p) => p.state.ready(now, this.#policy));
    if (ready.length > 0) return heldHere(this.#chosen(this.#pick(request, ready)), now);
    const live = onlyHealthy ? [] : open.filter((p) => p.state.live);
    if (live.length > 0)
      return { ...heldHere(this.#chosen(this.#pick(request, live)), now), lastResort: { retryAfterMs: probeIn(live, now) } };
    throw new ProvidersFailedError(router.spec.name, tried.size, unavailable(open), probeIn(open, now));
  }

  /** The scorers' preferred candidates, then (prefix affinity) those holding the most of the prompt, then the router's strategy among them. */
  #pick(request: PlaceRequest, candidates: readonly ProviderRoute[]): ProviderRoute {
    // The scorers first (engine room: a saturated replica is no candidate while another has
    // room), then the prompt's cache among what they kept: affinity never outweighs saturation.
    let preferred = candidates;
    const scorers = this.#scorers;
    for (let i = 0; i < scorers.length; i++) preferred = keepBest(preferred, scorers[i]!, request);
    if (request.matched !== undefined && this.#affinity !== undefined) preferred = keepBest(preferred, this.#affinity.scorer, request);
    return request.router.pick(request.router, preferred, this.#random);
  }

  #chosen(provider: ProviderRoute): ProviderRoute {
    this.#placed?.(provider);
    return provider;
  }

  /** Whether an untried candidate is ready: live, and its breaker lets a request through. */
  anyReady({ candidates, tried }: PlaceRequest): boolean {
    return candidates.some((p) => !tried.has(p) && this.isReady(p));
  }

  /** Whether `provider` is live and its breaker lets a request through now. */
  isReady(provider: ProviderRoute): boolean {
    return provider.state.ready(this.#now(), this.#policy);
  }
}

/** Why no provider could be tried: their health checks fail, or their breakers are open. */
function unavailable(providers: readonly ProviderRoute[]): UpstreamError {
  const down = providers.find((p) => !p.state.live);
  if (down && providers.every((p) => !p.state.live))
    return new UpstreamError('connect', `every provider is failing its health checks (last: ${down.state.healthReason ?? 'no answer'})`);
  const reason = providers.find((p) => p.state.breaker.reason)?.state.breaker.reason;
  return new UpstreamError('connect', `every provider is out after failing (circuit breaker open; last: ${reason ?? 'unknown'})`);
}

/**
 * A placement on `provider` counted in this gateway's requests in flight (least_busy, the
 * in-flight gauge, local caps) and, while its breaker is half-open, as one of its probes; given
 * back once with the answer's time to first token (lowest_latency); `andThen` hears the ending
 * too (queue mode gives back its fleet-wide slot).
 */
export function heldHere(provider: ProviderRoute, now: number, andThen?: (ending: AttemptEnding) => void): Placement {
  provider.state.inFlight++;
  const probe = provider.state.breaker.placed(now);
  let released = false;
  return {
    provider,
    release(ending) {
      if (released) return;
      released = true;
      provider.state.inFlight--;
      if (probe) provider.state.breaker.probeDone();
      if (!ending.failure && ending.ttftMs !== undefined) provider.state.recordTtft(ending.ttftMs);
      andThen?.(ending);
    },
  };
}

/** How long until an open breaker of these (live) providers lets a probe through; undefined when none will by itself. */
function probeIn(providers: readonly ProviderRoute[], now: number): number | undefined {
  let soonest: number | undefined;
  for (const { state } of providers) {
    if (!state.live || state.breaker.openUntil <= now) continue;
    const wait = state.breaker.openUntil - now;
    if (soonest === undefined || wait < soonest) soonest = wait;
  }
  return soonest;
}

function hasRoom(provider: ProviderRoute): boolean {
  const cap = provider.spec.max_concurrent;
  return cap === undefined || provider.state.inFlight < cap;
}
