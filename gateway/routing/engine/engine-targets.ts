// Which engine replicas a routing table has signals read from: today one per `vllm` provider,
// its URL, keyed `<provider id>@<url>`. The one place that says so, so that providers standing
// for several replicas (a list of URLs, a Service's endpoints) change this function alone.
import type { EngineTarget } from '../engine-signals.ts';
import type { ProviderRoute, RoutingTable } from '../routing-table.ts';

/** The key of one replica of a provider: stable while the provider keeps that URL. */
export const targetKey = (providerId: string, url: string) => `${providerId}@${url}`;

/** Defaults of a vllm provider's `saturation`. */
export const DEFAULT_SATURATION = { max_waiting: 5, max_kv_cache: 0.8 } as const;

/** Each route's engine target key, made once per route (routes live as long as their table). */
const targets = new WeakMap<ProviderRoute, string | null>();

/** The engine replica a route stands for (its signals are read under this key), or null when its engine is not read. */
export function engineTargetOf(route: ProviderRoute): string | null {
  let key = targets.get(route);
  if (key === undefined) {
    key = route.spec.type === 'vllm' ? targetKey(route.spec.id, route.spec.url) : null;
    targets.set(route, key);
  }
  return key;
}

/** When a route's engine counts as saturated: its provider's `saturation`, or the defaults. */
export function saturationOf(route: ProviderRoute): { readonly max_waiting: number; readonly max_kv_cache: number } {
  return (route.spec.type === 'vllm' && route.spec.saturation) || DEFAULT_SATURATION;
}

/** The table's targets: each `vllm` replica's URL, once even when several routers share the provider. */
export function vllmTargets(table: RoutingTable): EngineTarget[] {
  const targets = new Map<string, EngineTarget>();
  for (const route of table.providerList) {
    const key = engineTargetOf(route);
    if (key !== null && route.spec.type === 'vllm')
      targets.set(key, { key, providerId: route.spec.id, url: route.spec.url, kind: route.spec.type });
  }
  return [...targets.values()];
}
