// What the gateways found of each served provider's health (core/store/provider-health.ts), in the
// resources' status: a provider taken out by its health checks, or whose circuit breaker is open,
// is Ready=False with reason Unhealthy and the last error, and its router's ready count and Ready
// condition follow, so `kubectl get modelproviders` shows which backend is down. Pure.
import type { ProviderCondition } from '../../core/store/provider-health.ts';
import { condition } from './conditions.ts';
import type { ProviderOutcome, RouterOutcome, RoutingOutcome } from './desired-routing.ts';

/** Why a provider is out now, or undefined when it is in. */
export function unhealthyReason(health: ProviderCondition | undefined, now: number): string | undefined {
  if (!health) return undefined;
  if (health.healthy === false) return health.reason ?? 'health check failed';
  if (health.openUntil > now)
    return `circuit breaker open until ${new Date(health.openUntil).toISOString()}${health.reason ? `: ${health.reason}` : ''}`;
  return undefined;
}

/** The outcome's routers and providers with the health the gateways report; unchanged where they report nothing. */
export function withHealth(
  outcome: Pick<RoutingOutcome, 'routers' | 'providers'>,
  health: ReadonlyMap<string, ProviderCondition>,
  now: number,
): { routers: Map<string, RouterOutcome>; providers: Map<string, ProviderOutcome> } {
  const providers = new Map(outcome.providers);
  const down = new Map<string, number>(); // router key -> providers out
  for (const [key, provider] of outcome.providers) {
    if (!provider.served) continue;
    const reason = unhealthyReason(health.get(provider.served.id), now);
    if (reason === undefined) continue;
    down.set(provider.served.routerKey, (down.get(provider.served.routerKey) ?? 0) + 1);
    providers.set(key, {
      ...provider,
      conditions: provider.conditions.map((c) => (c.type === 'Ready' ? condition('Ready', false, 'Unhealthy', reason) : c)),
    });
  }
  const routers = new Map(outcome.routers);
  for (const [key, out] of down) {
    const router = outcome.routers.get(key);
    if (!router) continue;
    const ready = Math.max(0, router.providers.ready - out);
    const total = router.providers.total;
    routers.set(key, {
      ...router,
      providers: { ready, total },
      conditions: router.conditions.map((c) =>
        c.type !== 'Ready' || c.status !== 'True'
          ? c
          : ready > 0
            ? condition('Ready', true, 'Ready', `${ready} of ${total} providers are served and healthy`)
            : condition('Ready', false, 'NoHealthyProviders', `No provider of this router is healthy (${out} of ${total} unhealthy)`),
      ),
    });
  }
  return { routers, providers };
}
