// Load-balancing strategies (spec 4): each picks one provider among the available candidates.
import type { Strategy } from '../resources/kinds.ts';
import type { ProviderRoute, RouterRoute } from './routing-table.ts';

export type Random = () => number;

export type Pick = (router: RouterRoute, candidates: readonly ProviderRoute[], random: Random) => ProviderRoute;

/** Uniformly random. */
const shuffle: Pick = (_router, candidates, random) => candidates[Math.floor(random() * candidates.length)]!;

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
const leastBusy: Pick = (_router, candidates, random) => {
  let best: ProviderRoute[] = [];
  let fewest = Infinity;
  for (const candidate of candidates) {
    const busy = candidate.state.inFlight;
    if (busy < fewest) {
      fewest = busy;
      best = [candidate];
    } else if (busy === fewest) best.push(candidate);
  }
  return best[Math.floor(random() * best.length)]!;
};

export const STRATEGY_PICKS: Record<Strategy, Pick> = {
  shuffle,
  round_robin: roundRobin,
  least_busy: leastBusy,
};
