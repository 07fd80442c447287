// Which engine replicas a routing table has signals read from: today one per `vllm` provider,
// its URL, keyed `<provider id>@<url>`. The one place that says so, so that providers standing
// for several replicas (a list of URLs, a Service's endpoints) change this function alone.
import type { EngineTarget } from '../engine-signals.ts';
import type { RoutingTable } from '../routing-table.ts';

/** The key of one replica of a provider: stable while the provider keeps that URL. */
export const targetKey = (providerId: string, url: string) => `${providerId}@${url}`;

/** The table's targets: each `vllm` provider's URL, once even when several routers share the provider. */
export function vllmTargets(table: RoutingTable): EngineTarget[] {
  const targets = new Map<string, EngineTarget>();
  for (const { spec } of table.providerList) {
    if (spec.type !== 'vllm') continue;
    const key = targetKey(spec.id, spec.url);
    targets.set(key, { key, providerId: spec.id, url: spec.url, kind: spec.type });
  }
  return [...targets.values()];
}
