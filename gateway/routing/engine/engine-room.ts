// Admission on the engines' own load (issue 28, "admission on saturation, not a typed cap"): a
// vLLM replica is saturated when its waiting queue reaches `max_waiting` or its KV cache's use
// reaches `max_kv_cache` (the provider's `saturation`, default 5 and 80%), as read from its
// /metrics (engine-signals.ts). Local placement applies this scorer first: while any candidate has
// room, a saturated one receives nothing new; when all are saturated, the least loaded is kept,
// so engine signals alone never turn a request away (no 503 from them in local mode). A candidate
// without fresh signals (not vllm, not read yet, its scrape failing) counts as having room:
// routing then does what it did without signals.
import type { MetricsSource } from '../engine-signals.ts';
import type { PlacementScorer } from '../placement.ts';
import type { ProviderRoute } from '../routing-table.ts';
import { engineTargetOf, saturationOf } from './engine-targets.ts';

/**
 * How full the replica's engine is, 1 and more being saturated: the larger of its waiting queue
 * over max_waiting and its KV cache's use over max_kv_cache. Undefined without fresh signals.
 */
export function engineLoad(route: ProviderRoute, source: Pick<MetricsSource, 'signals'>): number | undefined {
  const target = engineTargetOf(route);
  if (target === null) return undefined;
  const signals = source.signals(target);
  if (signals === undefined) return undefined;
  const limits = saturationOf(route);
  const waiting = signals.waiting ?? 0;
  const kv = signals.kvCacheUsage ?? 0;
  const byQueue = limits.max_waiting === 0 ? (waiting > 0 ? Infinity : 0) : waiting / limits.max_waiting;
  const byCache = limits.max_kv_cache === 0 ? Infinity : kv / limits.max_kv_cache;
  return Math.max(byQueue, byCache);
}

/** Room first: 1 for a candidate with room (or unknown), below that the less loaded of the saturated. */
export function engineRoom(source: Pick<MetricsSource, 'signals'>): PlacementScorer {
  return {
    name: 'engine_room',
    score(candidates, scores) {
      for (let i = 0; i < candidates.length; i++) {
        const load = engineLoad(candidates[i]!, source);
        scores[i] = load === undefined || load < 1 ? 1 : 1 / (1 + load);
      }
    },
  };
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
