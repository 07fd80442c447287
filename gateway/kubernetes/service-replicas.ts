// The snapshot as the gateway's routing serves it in Kubernetes mode: each provider naming a
// Service (service_ref) given its ready endpoints as `urls`, and the Services a snapshot names
// (which service-endpoints.ts follows).
import type { ServiceRef } from '../../core/resources/service-ref.ts';
import type { ProviderSpec } from '../../core/resources/provider.ts';
import type { Snapshot } from '../../core/resources/snapshot.ts';
import { serviceId, serviceKeyOf, type ServiceKey } from '../../core/kubernetes/endpoint-slices.ts';

/**
 * The snapshot as routing serves it: each provider naming a Service given `urls`, its replicas'
 * addresses now (none while none is ready). The snapshot itself (what the admin API shows and
 * edits) keeps naming the Service.
 */
export function withReplicas(snapshot: Snapshot, replicas: (ref: ServiceRef) => readonly string[]): Snapshot {
  return { ...snapshot, providers: snapshot.providers.map((provider) => withProviderReplicas(provider, replicas)) };
}

function withProviderReplicas(provider: ProviderSpec, replicas: (ref: ServiceRef) => readonly string[]): ProviderSpec {
  if ((provider.type !== 'vllm' && provider.type !== 'tei') || provider.service_ref === undefined) return provider;
  return { ...provider, urls: [...replicas(provider.service_ref)] };
}

/** The Services a snapshot's providers name, each once. */
export function servicesNamed(snapshot: Snapshot, defaultNamespace: string): ServiceKey[] {
  const keys = new Map<string, ServiceKey>();
  for (const provider of snapshot.providers) {
    if ((provider.type !== 'vllm' && provider.type !== 'tei') || provider.service_ref === undefined) continue;
    const key = serviceKeyOf(provider.service_ref, defaultNamespace);
    keys.set(serviceId(key), key);
  }
  return [...keys.values()];
}
