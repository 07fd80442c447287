// A Service's replicas as Kubernetes lists them: its EndpointSlices (discovery.k8s.io/v1, or
// v1beta1 on an API server older than 1.21; label kubernetes.io/service-name). A provider naming a Service (service_ref) is served with one
// replica per ready address, at the port it names; this file is the pure part of that: slices to
// replica URLs, and a snapshot's providers given those URLs for the routing table.
import { endpointUrl, type ServiceRef } from '../../core/resources/service-ref.ts';
import type { KubeObject } from '../../core/kubernetes/kube-client.ts';
import type { ProviderSpec } from '../../core/resources/provider.ts';
import type { Snapshot } from '../../core/resources/snapshot.ts';

/** discovery.k8s.io/v1 from Kubernetes 1.21; 1.20 serves the same fields read here as v1beta1. */
export type SliceVersion = 'v1' | 'v1beta1';
export const endpointSlices = (version: SliceVersion) => ({ group: 'discovery.k8s.io', version, plural: 'endpointslices' });
/** The label the EndpointSlice controller puts on each slice of a Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** The fields of an EndpointSlice read here (discovery.k8s.io/v1). */
export type EndpointSlice = KubeObject & {
  addressType?: string;
  endpoints?: readonly {
    addresses?: readonly string[];
    /** `ready` unset means ready (the API's own reading). */
    conditions?: { ready?: boolean | null };
  }[];
  ports?: readonly { name?: string | null; port?: number | null }[] | null;
};

/** Where a Service's slices are: its namespace (the gateway's own when the reference names none) and name. */
export interface ServiceKey {
  readonly namespace: string;
  readonly name: string;
}

export function serviceKeyOf(ref: ServiceRef, defaultNamespace: string): ServiceKey {
  return { namespace: ref.namespace ?? defaultNamespace, name: ref.name };
}

/** `namespace/name`, a Service's key in maps. */
export function serviceId(key: ServiceKey): string {
  return `${key.namespace}/${key.name}`;
}

/**
 * The replica URLs of `ref` from its Service's slices: each ready address at the port named
 * (by name: the slice's port of that name, a slice without it serves none; by number: that
 * number, the replicas' own port as the slices list it), sorted, each once.
 */
export function replicaUrlsFromSlices(ref: ServiceRef, slices: readonly EndpointSlice[]): string[] {
  const urls = new Set<string>();
  for (const slice of slices) {
    const port = portOf(ref.port, slice);
    if (port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const address of endpoint.addresses ?? []) urls.add(endpointUrl(ref, address, port));
    }
  }
  return [...urls].toSorted();
}

function portOf(wanted: number | string, slice: EndpointSlice): number | undefined {
  if (typeof wanted === 'number') return wanted;
  const port = slice.ports?.find((p) => (p.name ?? '') === wanted)?.port;
  return typeof port === 'number' && port > 0 ? port : undefined;
}

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
