// The value sets the chart is checked with: rendered and inspected by render.test.ts, and
// applied to a real API server (kubectl apply --dry-run=server) by dry-run.test.ts.
import type { RenderOptions } from '../../support/helm.ts';

export const RELEASE = 'tollgate';
export const NAMESPACE = 'tollgate';
/** The namespace `everything on` watches (operator.watchNamespace): the dry run creates it. */
export const WATCHED_NAMESPACE = 'team-a';
/** The API server of the end-to-end harness. */
export const KUBE_VERSION = 'v1.20.2';
/** The Prometheus Operator's kinds, which `everything on` renders a ServiceMonitor and a PrometheusRule of. */
export const SERVICE_MONITOR_API = 'monitoring.coreos.com/v1/ServiceMonitor';
/** The Prometheus Operator's kind of alerting rules. */
export const PROMETHEUS_RULE_API = 'monitoring.coreos.com/v1/PrometheusRule';

/** An external Redis behind three Sentinels, its passwords from a Secret, with the failover loss bound on. */
export const SENTINEL_REDIS = {
  mode: 'external',
  external: {
    url: 'redis+sentinel://sentinel-0.redis:26379,sentinel-1.redis:26379,sentinel-2.redis:26379/tollgate',
    passwordSecret: { name: 'redis-auth' },
    sentinelPasswordSecret: { name: 'redis-auth', key: 'sentinel' },
  },
  durability: { waitReplicas: 1, waitTimeoutMs: 800, settleRetrySeconds: 300 },
} as const;

export interface ValueSet {
  readonly name: string;
  readonly values: object;
  /** API versions the cluster is said to serve, beyond Kubernetes' own. */
  readonly apiVersions?: readonly string[];
}

const customSecurity = {
  podSecurityContext: { runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001, fsGroupChangePolicy: 'OnRootMismatch' },
  securityContext: { runAsUser: 10001, runAsGroup: 10001 },
};

const ingress = {
  enabled: true,
  className: 'nginx',
  annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '300' },
  hosts: [
    { host: 'llm.example.com', paths: [{ path: '/', pathType: 'Prefix' }] },
    { host: 'playground.example.com', paths: [{ path: '/', pathType: 'Prefix' }] },
  ],
  tls: [{ secretName: 'tollgate-tls', hosts: ['llm.example.com', 'playground.example.com'] }],
};

export const VALUE_SETS: readonly ValueSet[] = [
  { name: 'defaults', values: {} },
  {
    name: 'external Redis, URL given',
    values: { redis: { mode: 'external', external: { url: 'rediss://:s3cret@redis.example.com:6380/0' } } },
  },
  {
    name: 'external Redis, existing Secret',
    values: { redis: { mode: 'external', external: { existingSecret: 'company-redis', existingSecretKey: 'url' } } },
  },
  { name: 'Redis behind Sentinel, passwords from Secrets, failover loss bound', values: { redis: SENTINEL_REDIS } },
  {
    name: 'bundled Redis on a storage class',
    values: { redis: { mode: 'bundled', bundled: { persistence: { storageClass: 'fast-ssd', size: '20Gi' } } } },
  },
  { name: 'bundled Redis without persistence', values: { redis: { bundled: { persistence: { enabled: false } } } } },
  { name: 'ingress with hosts and TLS', values: { ingress } },
  { name: 'autoscaling off', values: { gateway: { replicaCount: 3, autoscaling: { enabled: false } } } },
  { name: 'custom security context', values: customSecurity },
  {
    name: 'network policies',
    values: {
      networkPolicy: { enabled: true, gatewayFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'apps' } } }] },
    },
  },
  {
    name: 'everything on',
    apiVersions: [SERVICE_MONITOR_API, PROMETHEUS_RULE_API],
    values: {
      ...customSecurity,
      image: { repository: 'registry.example.com/tollgate', tag: '0.1.0-rc.1', pullPolicy: 'Always' },
      imagePullSecrets: [{ name: 'registry-credentials' }],
      logLevel: 'debug',
      routing: { configMapName: 'llm-routing', providerKeysSecretName: 'llm-provider-keys' },
      adminKey: { existingSecret: 'tollgate-admin', existingSecretKey: 'key' },
      gateway: {
        service: { type: 'LoadBalancer', port: 8080, annotations: { 'service.beta.kubernetes.io/aws-load-balancer-internal': 'true' } },
        autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 20, targetCPUUtilizationPercentage: 60 },
        podDisruptionBudget: { enabled: true, minAvailable: '50%' },
        settings: { maxAttempts: 2, failOpen: true, cooldownSeconds: 12.5 },
        serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/tollgate' } },
        podAnnotations: { 'example.com/team': 'platform' },
        podLabels: { 'example.com/cost-centre': 'ml' },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'llm', effect: 'NoSchedule' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] }] }],
            },
          },
        },
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'topology.kubernetes.io/zone',
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'gateway' } },
          },
        ],
        extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
      },
      operator: {
        watchNamespace: WATCHED_NAMESPACE,
        leaderElection: { leaseName: 'llm-operator', leaseDurationSeconds: 20 },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        extraEnv: [{ name: 'EXTRA', valueFrom: { configMapKeyRef: { name: 'extra', key: 'value' } } }],
      },
      redis: {
        mode: 'bundled',
        bundled: {
          image: { repository: 'docker.io/library/redis', tag: '8', pullPolicy: 'IfNotPresent' },
          tolerations: [{ key: 'dedicated', operator: 'Exists' }],
        },
      },
      metrics: {
        enabled: true,
        serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prometheus' } },
        prometheusRule: { enabled: true, labels: { release: 'prometheus' } },
        dashboards: { enabled: true, annotations: { grafana_folder: 'LLM' } },
      },
      tracing: {
        endpoint: 'http://otel-collector.observability:4318',
        resourceAttributes: { 'deployment.environment.name': 'prod' },
        usageLogs: true,
        captureContent: true,
        headersSecret: { name: 'otel-headers' },
      },
      ingress,
      networkPolicy: { enabled: true },
    },
  },
];

/** How to render a value set for the harness's API server. */
export function renderOptions(set: ValueSet): RenderOptions {
  return { release: RELEASE, namespace: NAMESPACE, kubeVersion: KUBE_VERSION, values: set.values, apiVersions: set.apiVersions };
}
