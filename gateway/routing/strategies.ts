// Load-balancing strategies (spec 4): each picks one provider among the available candidates.
// least_busy and lowest_latency are scorers (scoring.ts) kept in turn, then a random pick among
// the ties; shuffle is that pick alone; round_robin is a turn, not a score.
import type { Strategy } from '../../core/resources/kinds.ts';
import type { Cursor, ProviderState } from './provider-state.ts';
import { keepBest, type ProviderScorer } from './scoring.ts';

export type Random = () => number;

// What a strategy sees of a router and its providers: only what it decides on, so the routing
// table's types depend on the strategies and not the other way round.
export interface Candidate {
  readonly state: ProviderState;
}
export interface Rotation<C extends Candidate> {
  /** Every provider of the router, in declaration order. */
  readonly providers: readonly C[];
  readonly cursor: Cursor;
}

export type Pick = <C extends Candidate>(router: Rotation<C>, candidates: readonly C[], random: Random) => C;

/** Fewer requests in flight in this gateway scores higher. */
export const fewestInFlight: ProviderScorer<Candidate> = {
  name: 'fewest_in_flight',
  score(candidates, scores) {
    for (let i = 0; i < candidates.length; i++) scores[i] = 1 / (1 + candidates[i]!.state.inFlight);
  },
};

/** A first token about as fast as the fastest candidate's (within a quarter, plus 5 ms) scores 1, a slower one 0. */
export const nearFastest: ProviderScorer<Candidate> = {
  name: 'near_fastest_first_token',
  score(candidates, scores) {
    let fastest = Infinity;
    for (const candidate of candidates) fastest = Math.min(fastest, candidate.state.ttftMs);
    for (let i = 0; i < candidates.length; i++) scores[i] = candidates[i]!.state.ttftMs <= fastest * 1.25 + 5 ? 1 : 0;
  },
};

/** One of `candidates`, as the random number says. */
function atRandom<C>(candidates: readonly C[], random: Random): C {
  return candidates[Math.floor(random() * candidates.length)]!;
}

/** Uniformly random. */
const shuffle: Pick = (_router, candidates, random) => atRandom(candidates, random);

/** In turn, in the order the providers are declared; a provider that is unavailable is skipped. */
const roundRobin: Pick = (router, candidates) => {
  const all = router.providers;
  for (let step = 0; step < all.length; step++) {
    const next = all[router.cursor.next++ % all.length]!;
    if (candidates.includes(next)) return next;
  }
  return candidates[0]!;
};

/** Fewest requests in flight; ties broken at random so equal providers share the load. */
const leastBusy: Pick = (_router, candidates, random) => atRandom(keepBest(candidates, fewestInFlight, undefined), random);

/** Share of lowest_latency's choices that go to another provider, so that a slower one is still measured and a recovered one noticed. */
export const LATENCY_PROBE_SHARE = 0.05;

/**
 * Fastest first token now (a provider never measured is tried first). Providers about as fast as
 * the fastest (within a quarter, plus 5 ms) share the traffic, fewest in flight first, so an
 * equal provider is not left idle; a few probes go elsewhere, so a slower one is still measured.
 */
const lowestLatency: Pick = (_router, candidates, random) => {
  if (candidates.length > 1 && random() < LATENCY_PROBE_SHARE) return atRandom(candidates, random);
  for (const candidate of candidates) if (candidate.state.measured === 0) return candidate;
  return atRandom(keepBest(keepBest(candidates, nearFastest, undefined), fewestInFlight, undefined), random);
};

export const STRATEGY_PICKS: Record<Strategy, Pick> = {
  shuffle,
  round_robin: roundRobin,
  least_busy: leastBusy,
  lowest_latency: lowestLatency,
  // The replicas that hold the most of the prompt's prefix are kept first (prefix/prefix-affinity.ts): the least busy of them.
  prefix_affinity: leastBusy,
};
