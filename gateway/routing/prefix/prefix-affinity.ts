// Prefix-cache affinity (the `prefix_affinity` strategy, docs/routing-modes.md): a request goes
// to the replica that probably holds the most of its prompt's beginning in its prefix cache, so
// the engine skips that prefill. Before the choice, the fleet's prefix index (core/store/
// prefix-index.ts) says how many of the prompt's leading blocks (prompt-blocks.ts) each candidate
// was sent lately; the scorer below keeps those that hold the most, unless they are too busy, and
// the strategy then takes the least busy of them. After it, the chosen replica is recorded as
// holding the prompt. Affinity yields to load: a replica far busier than the least busy
// candidate gets no credit for its cache, so a hot system prompt spreads to more replicas
// (which then hold it too) instead of piling onto one.
import type { PrefixIndexStore } from '../../../core/store/prefix-index.ts';
import type { PlacementAffinity, PlacementScorer, PlaceRequest } from '../placement.ts';
import type { ProviderRoute } from '../routing-table.ts';

/**
 * How much busier than the least busy candidate (in this gateway's requests in flight) a replica
 * may be and still win on its cache: twice as busy, or 8 more, whichever is more.
 */
export function tooBusyForAffinity(inFlight: number, leastInFlight: number): boolean {
  return inFlight > Math.max(2 * leastInFlight, leastInFlight + 8);
}

/** Scores each candidate by the prompt blocks it holds (request.matched), 0 for one too busy; all 0 without matches. */
export const cachedPrefix: PlacementScorer = {
  name: 'cached_prefix',
  score(candidates, scores, request) {
    const matched = request.matched;
    let least = Infinity;
    for (const candidate of candidates) least = Math.min(least, candidate.state.inFlight);
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[i]!;
      const held = matched?.get(candidate) ?? 0;
      scores[i] = held > 0 && !tooBusyForAffinity(candidate.state.inFlight, least) ? held : 0;
    }
  },
};

/** Reads and feeds the prefix index for the routers that use prefix_affinity. */
export class PrefixAffinity implements PlacementAffinity {
  readonly scorer = cachedPrefix;
  readonly #index: PrefixIndexStore;
  readonly #now: () => number;

  constructor(index: PrefixIndexStore, now: () => number = Date.now) {
    this.#index = index;
    this.#now = now;
  }

  /** Whether `request` is placed with affinity: its router's strategy, and a prompt of at least one whole block. */
  applies(request: PlaceRequest): boolean {
    return request.router.spec.load_balancing_strategy === 'prefix_affinity' && request.prompt !== undefined;
  }

  /**
   * The blocks of the prompt each candidate holds. A store that does not answer gives none: the
   * request is placed on load alone, as it would be without affinity.
   */
  async matched(candidates: readonly ProviderRoute[], chain: readonly string[]): Promise<ReadonlyMap<ProviderRoute, number>> {
    if (chain.length === 0) return new Map();
    try {
      const counts = await this.#index.matches(
        candidates.map((c) => c.key),
        chain,
        this.#now(),
      );
      return new Map(candidates.map((c, i) => [c, counts[i] ?? 0]));
    } catch {
      return new Map();
    }
  }

  /** `replica` was chosen for `chain`: recorded in the background, a failure only costs a later match. */
  chosen(replica: ProviderRoute, chain: readonly string[]): void {
    if (chain.length === 0) return;
    this.#index.record(replica.key, chain, this.#now()).catch(() => {});
  }
}
