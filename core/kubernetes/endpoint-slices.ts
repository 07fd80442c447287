// A Service's replicas as Kubernetes lists them: its EndpointSlices (discovery.k8s.io/v1, or
// v1beta1 on an API server older than 1.21; label kubernetes.io/service-name). Pure reading of
// slices into replica URLs, shared by the gateway (which routes to them) and the operator (which
// counts them in a ModelProvider's status).
import { endpointUrl, type ServiceRef } from '../resources/service-ref.ts';
import type { KubeClient, KubeObject } from './kube-client.ts';

/** discovery.k8s.io/v1 from Kubernetes 1.21; 1.20 serves the same fields read here as v1beta1. */
export type SliceVersion = 'v1' | 'v1beta1';
export const endpointSlices = (version: SliceVersion) => ({ group: 'discovery.k8s.io', version, plural: 'endpointslices' });
/** The label the EndpointSlice controller puts on each slice of a Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/**
 * The EndpointSlice API the server serves: v1 where its discovery document lists it, else v1beta1
 * (Kubernetes 1.20). Discovery documents are readable by every authenticated identity
 * (system:discovery); the group's is always there, so asking is no failure to report.
 */
export async function endpointSliceVersion(client: KubeClient, signal?: AbortSignal): Promise<SliceVersion> {
  const group = await client.request<{ versions?: { version?: string }[] }>({
    path: '/apis/discovery.k8s.io',
    ...(signal ? { signal } : {}),
  });
  return group.versions?.some((v) => v.version === 'v1') ? 'v1' : 'v1beta1';
}

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
