// Runtime state of each provider: requests in flight (for least_busy and the gauge), its circuit
// breaker (circuit-breaker.ts) and its health checks' verdict, both moved by provider health
// (provider-health.ts). Kept by provider id outside the routing table, so a reloaded table keeps
// counting where the last one left off.
import { CircuitBreaker, type BreakerPolicy } from './circuit-breaker.ts';

export type { BreakerPolicy } from './circuit-breaker.ts';

export class ProviderState {
  inFlight = 0;
  readonly breaker = new CircuitBreaker();
  /** The health checks' verdict: false takes the provider out; undefined while it is not checked. */
  healthy: boolean | undefined = undefined;
  /** Why the last probe failed, and when the last verdict came (ms since the epoch). */
  healthReason: string | null = null;
  checkedAt: number | null = null;
  /** Moving average of the time to first token (ms; the whole answer's time when not streamed), for lowest_latency. */
  ttftMs = 0;
  /** Answers measured into ttftMs. */
  measured = 0;
  /**
   * prefix_affinity's predictions for the requests placed on it here: of their prompts' blocks
   * (prefixBlocks), those it was predicted to hold in its prefix cache (prefixHitBlocks). Counters
   * in memory, shown by the routing view and /metrics; never reset but with the state.
   */
  prefixHitBlocks = 0;
  prefixBlocks = 0;

  recordTtft(ms: number): void {
    this.ttftMs = this.measured === 0 ? ms : this.ttftMs * 0.8 + ms * 0.2;
    this.measured++;
  }

  /** A request of `blocks` prompt blocks was placed on it, predicted to find `held` of them in its cache. */
  countPrefix(held: number, blocks: number): void {
    this.prefixHitBlocks += held;
    this.prefixBlocks += blocks;
  }

  /** Not taken out by its health checks. */
  get live(): boolean {
    return this.healthy !== false;
  }

  /** Whether a request may go to it now: live, and its breaker lets it through. */
  ready(now: number, policy: BreakerPolicy): boolean {
    return this.live && this.breaker.allows(now, policy);
  }
}

/** Where round robin stands for one router. */
export interface Cursor {
  next: number;
}

export class ProviderStates {
  readonly #states = new Map<string, ProviderState>();
  readonly #cursors = new Map<string, Cursor>();

  cursor(routerName: string): Cursor {
    let cursor = this.#cursors.get(routerName);
    if (!cursor) {
      cursor = { next: 0 };
      this.#cursors.set(routerName, cursor);
    }
    return cursor;
  }

  get(providerId: string): ProviderState {
    let state = this.#states.get(providerId);
    if (!state) {
      state = new ProviderState();
      this.#states.set(providerId, state);
    }
    return state;
  }

  /** Drops the state of providers that no longer exist. */
  retain(providerIds: ReadonlySet<string>, routerNames: ReadonlySet<string>): void {
    for (const id of this.#states.keys()) if (!providerIds.has(id)) this.#states.delete(id);
    for (const name of this.#cursors.keys()) if (!routerNames.has(name)) this.#cursors.delete(name);
  }
}
