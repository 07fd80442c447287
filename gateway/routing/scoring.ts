// The choice among providers as scores (docs/architecture.md, "Adding a routing signal"): a
// ProviderScorer gives each candidate a score, higher better, and keepBest keeps those it scores
// best. Today's strategies are built of scorers (strategies.ts: least_busy keeps the fewest in
// flight; lowest_latency those about as fast as the fastest, then the fewest in flight), and local
// placement puts the scorers routing is composed with in front of a router's strategy
// (placement.ts), so that a new signal (a provider's prefix cache, its engine's queue: see
// engine-signals.ts) is a scorer added there, not a rewrite of the strategies.

/**
 * One preference among candidates `C` for a request `R`. Scores are compared (and added, by a
 * scorer that weighs others): keep them in [0, 1]. A scorer runs on the request's path: it reads
 * what it knows already (the provider's state, signals read in the background), never waits.
 */
export interface ProviderScorer<C, R = undefined> {
  /** What it prefers, for logs and documentation. */
  readonly name: string;
  /** Writes the score of each of `candidates` into `scores`, at the same index. */
  score(candidates: readonly C[], scores: Float64Array, request: R): void;
}

/** Reused by every keepBest (a synchronous pass; a scorer never calls keepBest itself), so scoring allocates nothing. */
let scratch = new Float64Array(16);

/** The candidates `scorer` scores best, in their order: `candidates` itself when it scores them all alike. */
export function keepBest<C extends S, S, R>(candidates: readonly C[], scorer: ProviderScorer<S, R>, request: R): readonly C[] {
  if (candidates.length <= 1) return candidates;
  if (scratch.length < candidates.length) scratch = new Float64Array(candidates.length * 2);
  const scores = scratch;
  scorer.score(candidates, scores, request);
  let best = -Infinity;
  let ties = 0;
  for (let i = 0; i < candidates.length; i++) {
    if (scores[i]! > best) {
      best = scores[i]!;
      ties = 1;
    } else if (scores[i] === best) ties++;
  }
  // Scored all alike, or not at all (NaN): nothing to prefer.
  if (ties === candidates.length || ties === 0) return candidates;
  const kept: C[] = [];
  for (let i = 0; i < candidates.length; i++) if (scores[i] === best) kept.push(candidates[i]!);
  return kept;
}
