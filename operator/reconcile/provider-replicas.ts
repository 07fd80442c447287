// How many replicas of a served provider are ready, for its status (`kubectl get modelproviders
// -o wide`): a Service's ready endpoints when it names one (from the operator's EndpointSlice
// cache, read as the gateways read them), else the addresses it lists; the simulator is one.
import { replicaUrlsFromSlices, SERVICE_NAME_LABEL, type EndpointSlice } from '../../core/kubernetes/endpoint-slices.ts';
import { replicaUrls, type ProviderSpec } from '../../core/resources/provider.ts';
import type { Cache } from '../kube/resources.ts';

/** undefined when it cannot be told: a provider naming a Service while the operator follows no slices. */
export function readyReplicas(spec: ProviderSpec, namespace: string, slices: Cache<EndpointSlice> | undefined): number | undefined {
  if (spec.type === 'simulator') return 1;
  if ((spec.type !== 'vllm' && spec.type !== 'tei') || spec.service_ref === undefined) return replicaUrls(spec).length;
  if (!slices) return undefined;
  const ref = spec.service_ref;
  const own = slices
    .list()
    .filter(
      (slice) => slice.metadata?.namespace === (ref.namespace ?? namespace) && slice.metadata?.labels?.[SERVICE_NAME_LABEL] === ref.name,
    );
  return replicaUrlsFromSlices(ref, own).length;
}
