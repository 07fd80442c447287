// Process settings of `tollgate operator`: read once at start-up from flags and environment
// variables (flags win), validated by one schema, then frozen. Names shared with the gateway's
// Kubernetes mode (--namespace, --routing-config-map, --provider-keys-secret, --kubeconfig,
// --pod-name) mean the same there, so one set of variables configures both.
import { hostname } from 'node:os';
import { z } from 'zod';
import type { KubeConnectionSettings } from '../core/kubernetes/kube-client.ts';
import {
  REDIS_DURABILITY_SETTINGS,
  REDIS_PASSWORD_SETTINGS,
  RedisUrl,
  describeIssues,
  LOG_LEVEL_SETTING,
  optionsOf,
  readRaw,
  ROUTING_MODE_SETTING,
  schemaOf,
  type Settings,
} from '../core/settings.ts';

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const Namespace = z.string().max(63).regex(NAMESPACE, 'must be a Kubernetes namespace name (lower-case letters, digits and -)');
const ObjectName = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Kubernetes object name (lower-case letters, digits, - and .)');

/** Every setting of `tollgate operator`, once: flags, variables, --help and docs come from here. */
export const OPERATOR_SETTINGS = {
  namespace: {
    schema: Namespace,
    value: '<name>',
    env: 'TOLLGATE_NAMESPACE',
    help: 'namespace of the routing ConfigMap and the provider keys Secret the operator writes',
  },
  watchNamespace: {
    schema: Namespace.optional(),
    value: '<name>',
    env: 'TOLLGATE_WATCH_NAMESPACE',
    help: 'watch ModelRouters, ModelProviders, GatewayUsers, GatewayTeams and Secrets in this namespace only',
    defaultText: 'all namespaces',
  },
  routingConfigMap: {
    schema: ObjectName.default('tollgate-routing'),
    value: '<name>',
    env: 'TOLLGATE_ROUTING_CONFIG_MAP',
    help: 'the ConfigMap the routing snapshot is written to',
  },
  providerKeysSecret: {
    schema: ObjectName.default('tollgate-provider-keys'),
    value: '<name>',
    env: 'TOLLGATE_PROVIDER_KEYS_SECRET',
    help: 'the Secret the provider keys are written to, by provider id',
  },
  leaseNamespace: {
    schema: Namespace.optional(),
    value: '<name>',
    env: 'TOLLGATE_LEASE_NAMESPACE',
    help: 'namespace of the leader-election Lease',
    defaultText: '`--namespace`',
  },
  leaseName: {
    schema: ObjectName.default('tollgate-operator'),
    value: '<name>',
    env: 'TOLLGATE_LEASE_NAME',
    help: 'name of the leader-election Lease',
  },
  leaseDurationSeconds: {
    schema: z.coerce.number().int().min(2).max(300).default(15),
    value: '<s>',
    env: 'TOLLGATE_LEASE_DURATION_SECONDS',
    help: 'how long a leader that stopped renewing keeps the Lease',
  },
  podName: {
    schema: z.string().min(1).max(253).optional(),
    value: '<name>',
    env: 'TOLLGATE_POD_NAME',
    help: 'identity in the leader election',
    defaultText: 'host name and process id',
  },
  kubeconfig: {
    schema: z.string().min(1).optional(),
    value: '<file>',
    env: 'TOLLGATE_KUBECONFIG',
    help: "kubeconfig file to use; without it, KUBECONFIG, then the pod's service account",
  },
  redisUrl: {
    schema: RedisUrl,
    value: '<url>',
    env: 'TOLLGATE_REDIS_URL',
    help: 'Redis the gateways share: users, key hashes, budgets, usage (redis[s]://host:port, or redis[s]+sentinel://sentinel:26379,.../<master>)',
  },
  ...REDIS_PASSWORD_SETTINGS,
  ...REDIS_DURABILITY_SETTINGS,
  statusPeriodSeconds: {
    schema: z.coerce.number().min(1).max(3600).default(15),
    value: '<s>',
    env: 'TOLLGATE_STATUS_PERIOD_SECONDS',
    help: 'how often usage (spent, remaining, requests) and Programmed are brought into status',
  },
  logLevel: LOG_LEVEL_SETTING,
  routingMode: {
    ...ROUTING_MODE_SETTING,
    help: "routing mode of routers that set none, as the gateways' --routing-mode: shown in ModelRouter status",
    doc: "The gateways' `--routing-mode` (the chart sets both): the mode ModelRouter `status.routingMode` reports for a router that sets none. In queue mode the status also reports the queue depth.",
  },
  healthPort: {
    schema: z.coerce.number().int().min(0).max(65535).default(8081),
    value: '<port>',
    env: 'TOLLGATE_HEALTH_PORT',
    help: 'port of /healthz, /readyz and /metrics (0: any free port, logged)',
    doc: 'Port of `/healthz`, `/readyz` and `/metrics`; 0 takes a free port (logged as `health server listening`).',
  },
  healthHost: {
    schema: z.string().min(1).default('0.0.0.0'),
    value: '<address>',
    env: 'TOLLGATE_HEALTH_HOST',
    help: 'address the health port listens on (:: for IPv6)',
  },
} as const satisfies Settings;

const Fields = schemaOf(OPERATOR_SETTINGS);

/** Flag, variable and --help line of each setting, for the command line. */
export const OPERATOR_OPTIONS = optionsOf(OPERATOR_SETTINGS);

export type OperatorSettings = Readonly<
  Omit<z.output<typeof Fields>, 'podName' | 'leaseNamespace' | 'kubeconfig'> & {
    leaseNamespace: string;
    /** Unique per replica: the pod name, or host name and process id. */
    identity: string;
    /** How to reach the API server, environment included, as read at start-up. */
    kube: KubeConnectionSettings;
  }
>;

export class OperatorSettingsError extends Error {
  override name = 'OperatorSettingsError';
}

/** Where the process runs, for the default identity; injectable for tests. */
export interface ProcessIdentity {
  readonly hostname: string;
  readonly pid: number;
}

/** Merges flags over environment variables, validates the result, and freezes it. */
export function readOperatorSettings(
  flags: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  host: ProcessIdentity = { hostname: hostname(), pid: process.pid },
): OperatorSettings {
  const raw = readRaw(OPERATOR_SETTINGS, flags, env);
  const parsed = Fields.safeParse(raw);
  if (!parsed.success) throw new OperatorSettingsError(describeIssues(OPERATOR_SETTINGS, parsed.error.issues, raw));
  const { podName, leaseNamespace, kubeconfig, ...rest } = parsed.data;
  return Object.freeze({
    ...rest,
    leaseNamespace: leaseNamespace ?? rest.namespace,
    identity: podName ?? `${host.hostname}-${host.pid}`,
    kube: Object.freeze({
      kubeconfigPath: kubeconfig,
      kubeconfigEnv: env.KUBECONFIG,
      serviceHost: env.KUBERNETES_SERVICE_HOST,
      servicePort: env.KUBERNETES_SERVICE_PORT,
    }),
  });
}
