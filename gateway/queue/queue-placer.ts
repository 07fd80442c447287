// Queue mode's placer: a router in queue mode asks the router workers for a provider (through
// QueueClient), and holds the fleet-wide slot it is given until the answer ends; a router in
// local mode, or any router while Redis does not answer and the fallback is `local`, is placed by
// the local placer. The slot given back carries how the provider did, for the workers' choices
// (how failures cool the provider down is provider health's, given to the queue client).
import type { QueueFallback, RoutingMode } from '../../core/resources/kinds.ts';
import type { SlotEnding } from '../../core/store/routing-queue.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { heldHere, type AttemptEnding, type LocalPlacer, type Placement, type Placer, type PlaceRequest } from '../routing/placement.ts';
import { ModelTooBusyError, ProvidersFailedError, QueueUnavailableError } from '../routing/routing-errors.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { QueueAnswer, QueueClient } from './queue-client.ts';

export interface QueueDefaults {
  /** The mode of a router that sets none. */
  readonly mode: RoutingMode;
  /** What a queue-mode router does while Redis does not answer, unless it says. */
  readonly whenRedisDown: QueueFallback;
  readonly maxWaitMs: number;
  readonly maxWaiting: number;
}

export interface QueueEvents {
  /** A queue-mode request placed locally because Redis does not answer. */
  onFallback?(router: RouterRoute): void;
  /** A queue-mode request refused because Redis does not answer and the router says to refuse. */
  onRefused?(router: RouterRoute): void;
  /** A worker's answer, after `waitedMs` in the queue. */
  onAnswer?(router: RouterRoute, answer: QueueAnswer, waitedMs: number): void;
}

export class QueuePlacer implements Placer {
  readonly #local: LocalPlacer;
  readonly #client: QueueClient | undefined;
  readonly #defaults: QueueDefaults;
  readonly #available: () => boolean;
  readonly #events: QueueEvents;

  /** `client` undefined: no Redis, so every router is placed locally. */
  constructor(
    local: LocalPlacer,
    client: QueueClient | undefined,
    options: { defaults: QueueDefaults; available: () => boolean; events?: QueueEvents },
  ) {
    this.#local = local;
    this.#client = client;
    this.#defaults = options.defaults;
    this.#available = options.available;
    this.#events = options.events ?? {};
  }

  /** The mode a router is served in: without Redis (no client), every router is local. */
  modeOf(router: RouterRoute): RoutingMode {
    if (!this.#client) return 'local';
    return router.spec.routing_mode ?? this.#defaults.mode;
  }

  place(request: PlaceRequest): Placement | Promise<Placement> {
    if (this.modeOf(request.router) === 'local') return this.#local.place(request);
    if (!this.#client || !this.#available()) return this.#fallback(request);
    // With a fallback router next, a router none of whose providers is ready (the breakers and
    // health checks every gateway shares) is left at once rather than after its wait.
    if (request.onlyHealthy && !this.#local.anyReady(request))
      throw new ProvidersFailedError(request.router.spec.name, request.tried.size, undefined);
    return this.#ask(this.#client, request);
  }

  #fallback(request: PlaceRequest): Placement {
    const { router } = request;
    if ((router.spec.queue?.when_redis_down ?? this.#defaults.whenRedisDown) === 'refuse') {
      this.#events.onRefused?.(router);
      throw new QueueUnavailableError();
    }
    this.#events.onFallback?.(router);
    return this.#local.placeNow(request);
  }

  /**
   * The providers the workers must not give this request: those it tried, and those this
   * gateway's breaker keeps requests off (half-open with its probes taken, or open before the
   * fleet's cool-down reached Redis), unless that would leave none.
   */
  #excluded({ candidates, tried }: PlaceRequest): string[] {
    const untried = candidates.filter((p) => !tried.has(p));
    const held = untried.filter((p) => !this.#local.isReady(p));
    const out = held.length < untried.length ? [...tried, ...held] : [...tried];
    return out.map((p) => p.key);
  }

  async #ask(client: QueueClient, request: PlaceRequest): Promise<Placement> {
    const { router, candidates, tried, signal } = request;
    const startedAt = performance.now();
    // The router's wait, and never past the request's deadline.
    const maxWaitMs = Math.max(
      1,
      Math.floor(
        Math.min((router.spec.queue?.max_wait_seconds ?? this.#defaults.maxWaitMs / 1000) * 1000, request.deadline - performance.now()),
      ),
    );
    const waiting = request.trace?.queued(router, request.priority, maxWaitMs);
    let answer: QueueAnswer;
    try {
      answer = await client.ask(
        {
          router: router.spec.name,
          caller: request.caller,
          endpoint: request.endpoint,
          priority: request.priority,
          exclude: this.#excluded(request),
          maxWaitMs,
          maxWaiting: router.spec.queue?.max_waiting ?? this.#defaults.maxWaiting,
          traceparent: waiting?.traceparent,
        },
        signal,
      );
    } catch {
      // The entry could not be added: Redis does not answer.
      waiting?.answered('unavailable');
      return this.#fallback(request);
    }
    waiting?.answered(answer.status, answer.status === 'ok' ? answer.provider : undefined);
    this.#events.onAnswer?.(router, answer, performance.now() - startedAt);
    switch (answer.status) {
      case 'busy':
        throw new ModelTooBusyError(router.spec.name, answer.retryAfterSeconds, 'no provider slot came free in time, or the queue is full');
      case 'none':
        throw new ProvidersFailedError(router.spec.name, tried.size, undefined);
      case 'aborted':
        throw new UpstreamError('aborted', 'the client closed the request while it waited for a provider');
      case 'unavailable':
        return this.#fallback(request);
    }
    const provider = candidates.find((p) => p.key === answer.provider);
    if (!provider) {
      // The worker chose on a newer or older set of providers than this request's table.
      void client.release(answer.requestId, UNUSED);
      throw new ProvidersFailedError(router.spec.name, tried.size, undefined);
    }
    return heldHere(provider, Date.now(), (ending) => void client.release(answer.requestId, slotEnding(ending)));
  }
}

/** A slot given back without having served. */
const UNUSED: SlotEnding = { outcome: 'none' };

/** How an attempt ended, as the fleet-wide metrics count it. */
function slotEnding(ending: AttemptEnding): SlotEnding {
  if (ending.blameless) return UNUSED;
  const error = ending.failure;
  if (error) {
    const outcome = error.status === 429 ? 'limited' : error.failure === 'timeout' ? 'timeout' : 'fail';
    return { outcome, retryAfterMs: error.retryAfterMs };
  }
  const { ttftMs, latencyMs, completionTokens } = ending;
  const tpotMs =
    ttftMs !== undefined && latencyMs !== undefined && completionTokens !== undefined && completionTokens > 1
      ? (latencyMs - ttftMs) / (completionTokens - 1)
      : undefined;
  return { outcome: 'ok', ttftMs, latencyMs, tpotMs };
}
