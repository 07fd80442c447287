// What /metrics shows of each replica's engine and of prefix affinity (observability/
// engine-metrics.ts), read at scrape time from the table served, the engine signals and each
// route's state: the same numbers and the same saturation verdict as GET /v1/admin/routing.
import type { ReplicaGauges } from '../../observability/engine-metrics.ts';
import { maskUrl } from '../../providers/secrets.ts';
import { engineLoad } from '../engine/engine-room.ts';
import { engineTargetOf } from '../engine/engine-targets.ts';
import type { MetricsSource } from '../engine-signals.ts';
import type { RoutingTable } from '../routing-table.ts';

/** Each route of `table`, with its engine's signals (fresh ones only) and prefix affinity's counters. */
export function* engineGauges(table: RoutingTable, engines: Pick<MetricsSource, 'signals' | 'staleness'>): Iterable<ReplicaGauges> {
  for (const router of table.routers) {
    const affinity = router.spec.load_balancing_strategy === 'prefix_affinity';
    for (const route of router.providers) {
      const target = engineTargetOf(route);
      const signals = target === null ? undefined : engines.signals(target);
      const freshness = target === null ? undefined : engines.staleness(target);
      const load = signals === undefined ? undefined : engineLoad(route, engines);
      yield {
        router: router.spec.name,
        provider: route.spec.id,
        replica: route.replica === undefined ? undefined : maskUrl(route.replica),
        engine:
          signals === undefined
            ? undefined
            : { waiting: signals.waiting, running: signals.running, kvCacheUsage: signals.kvCacheUsage, saturated: (load ?? 0) >= 1 },
        signalsAgeSeconds: freshness === undefined || freshness.state === 'unknown' ? undefined : freshness.ageMs / 1000,
        prefix: affinity ? { predictedHitBlocks: route.state.prefixHitBlocks, promptBlocks: route.state.prefixBlocks } : undefined,
      };
    }
  }
}
