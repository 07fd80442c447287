// Settings of Kubernetes mode: where the routing ConfigMap and the provider keys Secret are, how
// the API is reached, and what the pod reports itself as. One group of the gateway's settings
// registry (gateway/config/settings.ts); the docs list them on docs/kubernetes.md.
import { z } from 'zod';
import type { Settings } from '../../../core/settings.ts';
import { Bool, DnsLabel, DnsSubdomain } from './value-schemas.ts';

/** Kubernetes mode, in the order --help and the docs list them (group `kubernetes`). */
export const KUBERNETES_SETTINGS = {
  kubernetes: {
    schema: Bool(false),
    env: 'TOLLGATE_KUBERNETES',
    help: 'Kubernetes mode: serve the routing ConfigMap and the provider keys Secret, watched through the API (needs --namespace and --redis-url; no --config)',
    doc: 'Kubernetes mode. Needs `--namespace` and `--redis-url`. `--config` is refused: routers and providers come from the ConfigMap.',
    group: 'kubernetes',
  },
  namespace: {
    schema: DnsLabel.optional(),
    value: '<name>',
    env: 'TOLLGATE_NAMESPACE',
    help: 'Kubernetes mode: namespace of the routing ConfigMap and the provider keys Secret',
    doc: "Namespace of the ConfigMap and the Secret. Usually the pod's own namespace (downward API `metadata.namespace`). Required with `--kubernetes`.",
    group: 'kubernetes',
  },
  routingConfigMap: {
    schema: DnsSubdomain.default('tollgate-routing'),
    value: '<name>',
    env: 'TOLLGATE_ROUTING_CONFIG_MAP',
    help: 'Kubernetes mode: the ConfigMap holding the routing snapshot',
    doc: 'The ConfigMap holding the routing snapshot.',
    group: 'kubernetes',
  },
  providerKeysSecret: {
    schema: DnsSubdomain.default('tollgate-provider-keys'),
    value: '<name>',
    env: 'TOLLGATE_PROVIDER_KEYS_SECRET',
    help: 'Kubernetes mode: the Secret holding the provider keys, by provider id',
    doc: 'The Secret holding the provider keys, by provider id.',
    group: 'kubernetes',
  },
  kubeconfig: {
    schema: z.string().min(1).optional(),
    value: '<file>',
    env: 'TOLLGATE_KUBECONFIG',
    help: "Kubernetes mode: kubeconfig file to use; without it, KUBECONFIG, then the pod's service account",
    doc: "A kubeconfig file. Without it the gateway uses `KUBECONFIG`, then the pod's service account.",
    group: 'kubernetes',
  },
  podName: {
    schema: z.string().min(1).max(253).optional(),
    value: '<name>',
    env: 'TOLLGATE_POD_NAME',
    help: 'Kubernetes mode: name this gateway reports the snapshot version it serves under',
    doc: 'The name under which the pod reports what it serves (downward API `metadata.name`).',
    defaultText: 'the host name',
    group: 'kubernetes',
  },
  resourceNamespace: {
    schema: DnsLabel.optional(),
    value: '<name>',
    env: 'TOLLGATE_RESOURCE_NAMESPACE',
    help: 'Kubernetes mode: namespace where the admin API writes ModelRouter, ModelProvider and GatewayUser resources',
    doc: 'Where the admin API writes ModelRouter, ModelProvider and GatewayUser resources ([below](#the-admin-api-in-kubernetes-mode)).',
    defaultText: '`--namespace`',
    group: 'kubernetes',
  },
} as const satisfies Settings;
