// Admission on the engines' own load (issue 28, "admission on saturation, not a typed cap"): a
// vLLM replica is saturated when its waiting queue reaches `max_waiting` or its KV cache's use
// reaches `max_kv_cache` (the provider's `saturation`, default 5 and 80%), as read from its
// /metrics (engine-signals.ts). Local placement applies this scorer first: while any candidate has
// room, a saturated one receives nothing new; when all are saturated, the least loaded is kept
// (for a prefix_affinity request, the replica holding most of its prompt, unless far busier), so
// engine signals alone never turn a request away (no 503 from them in local mode). A candidate
// without fresh signals (not vllm, not read yet, its scrape failing) counts as having room:
// routing then does what it did without signals.
import type { MetricsSource } from '../engine-signals.ts';
import type { PlacementScorer } from '../placement.ts';
import { tooBusyForAffinity } from '../prefix/prefix-affinity.ts';
import type { ProviderRoute } from '../routing-table.ts';
import { engineTargetOf, saturationOf } from './engine-targets.ts';

/**
 * How full the replica's engine is, 1 and more being saturated: the larger of its waiting queue
 * over max_waiting and its KV cache's use over max_kv_cache (`queueOnly`: the queue alone).
 * Undefined without fresh signals.
 */
export function engineLoad(route: ProviderRoute, source: Pick<MetricsSource, 'signals'>, queueOnly = false): number | undefined {
  const target = engineTargetOf(route);
  if (target === null) return undefined;
  const signals = source.signals(target);
  if (signals === undefined) return undefined;
  const limits = saturationOf(route);
  const waiting = signals.waiting ?? 0;
  const kv = signals.kvCacheUsage ?? 0;
  const byQueue = limits.max_waiting === 0 ? (waiting > 0 ? Infinity : 0) : waiting / limits.max_waiting;
  if (queueOnly) return byQueue;
  const byCache = limits.max_kv_cache === 0 ? Infinity : kv / limits.max_kv_cache;
  return Math.max(byQueue, byCache);
}

/**
 * Room first: 1 for a candidate with room (or unknown), below that the less loaded of the
 * saturated. For a request placed with prefix affinity (request.matched), two things change, both
 * because a replica that holds the prompt takes it for a few blocks and no prefill:
 * - a replica holding some of the prompt is judged by its queue alone: its KV use is mostly the
 *   shared prompt's blocks, held by the requests running on it, which this one reuses (at the
 *   default 80% a replica serving a few long system prompts looked saturated while it had room,
 *   and their requests went to replicas that had to prefill them);
 * - when every candidate is saturated, those holding the most of the prompt score 1, unless far
 *   busier than the least busy (tooBusyForAffinity), where the least loaded would take the whole
 *   prompt's blocks and prefill, fill its cache with every prompt, and keep the fleet saturated.
 * (bench/RESULTS.md, issue 28's bench: both kept prefix_affinity from collapsing past saturation.)
 */
export function engineRoom(source: Pick<MetricsSource, 'signals'>): PlacementScorer {
  return {
    name: 'engine_room',
    score(candidates, scores, request) {
      let room = false;
      for (let i = 0; i < candidates.length; i++) {
        const candidate = candidates[i]!;
        const load = engineLoad(candidate, source, (request.matched?.get(candidate) ?? 0) > 0);
        scores[i] = load === undefined || load < 1 ? 1 : 1 / (1 + load);
        if (scores[i] === 1) room = true;
      }
      if (!room && request.matched !== undefined) preferHolders(candidates, scores, request.matched);
    },
  };
}

/** Every candidate saturated: the holders of the most prompt blocks, unless too busy for affinity, score 1. */
function preferHolders(candidates: readonly ProviderRoute[], scores: Float64Array, matched: ReadonlyMap<ProviderRoute, number>): void {
  let least = Infinity;
  for (const candidate of candidates) least = Math.min(least, candidate.state.inFlight);
  let most = 0;
  for (const candidate of candidates) {
    const held = matched.get(candidate) ?? 0;
    if (held > most && !tooBusyForAffinity(candidate.state.inFlight, least)) most = held;
  }
  if (most === 0) return;
  for (let i = 0; i < candidates.length; i++) {
    const candidate = candidates[i]!;
    if (matched.get(candidate) === most && !tooBusyForAffinity(candidate.state.inFlight, least)) scores[i] = 1;
  }
}

/**
 * Counts a request placed on `route` into its engine's signals (MetricsSource.sent), so that
 * between two readings its queue looks as long as the requests sent since make it, and a burst
 * does not all land on the replica that looked emptiest. Only while the engine's signals are
 * fresh: otherwise no one decides on them, and nothing is sent to the store for it.
 */
export function countPlaced(source: Pick<MetricsSource, 'signals' | 'sent'>): (route: ProviderRoute) => void {
  return (route) => {
    const target = engineTargetOf(route);
    if (target !== null && source.signals(target) !== undefined) source.sent(target);
  };
}
