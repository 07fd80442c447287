// Process settings of `tollgate operator`: read once at start-up from flags and environment
// variables (flags win), validated by one schema, then frozen. Names shared with the gateway's
// Kubernetes mode (--namespace, --routing-config-map, --provider-keys-secret, --kubeconfig,
// --pod-name) mean the same there, so one set of variables configures both.
import { hostname } from 'node:os';
import { z } from 'zod';
import { LOG_LEVELS } from '../core/log.ts';
import type { KubeConnectionSettings } from '../core/kubernetes/kube-client.ts';

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const Namespace = z.string().max(63).regex(NAMESPACE, 'must be a Kubernetes namespace name (lower-case letters, digits and -)');
const ObjectName = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Kubernetes object name (lower-case letters, digits, - and .)');

const Fields = z.strictObject({
  namespace: Namespace,
  watchNamespace: Namespace.optional(),
  routingConfigMap: ObjectName.default('tollgate-routing'),
  providerKeysSecret: ObjectName.default('tollgate-provider-keys'),
  leaseNamespace: Namespace.optional(),
  leaseName: ObjectName.default('tollgate-operator'),
  leaseDurationSeconds: z.coerce.number().int().min(2).max(300).default(15),
  podName: z.string().min(1).max(253).optional(),
  kubeconfig: z.string().min(1).optional(),
  redisUrl: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  statusPeriodSeconds: z.coerce.number().min(1).max(3600).default(15),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  healthPort: z.coerce.number().int().min(0).max(65535).default(8081),
  healthHost: z.string().min(1).default('0.0.0.0'),
});

/** Flag name, environment variable and help of each setting, for the CLI and its --help. */
export const OPERATOR_OPTIONS = [
  {
    key: 'namespace',
    flag: '--namespace <name>',
    env: 'TOLLGATE_NAMESPACE',
    help: 'namespace of the routing ConfigMap and the provider keys Secret the operator writes (required)',
  },
  {
    key: 'watchNamespace',
    flag: '--watch-namespace <name>',
    env: 'TOLLGATE_WATCH_NAMESPACE',
    help: 'watch ModelRouters, ModelProviders, GatewayUsers and Secrets in this namespace only (default: all namespaces)',
  },
  {
    key: 'routingConfigMap',
    flag: '--routing-config-map <name>',
    env: 'TOLLGATE_ROUTING_CONFIG_MAP',
    help: 'the ConfigMap the routing snapshot is written to (default tollgate-routing)',
  },
  {
    key: 'providerKeysSecret',
    flag: '--provider-keys-secret <name>',
    env: 'TOLLGATE_PROVIDER_KEYS_SECRET',
    help: 'the Secret the provider keys are written to, by provider id (default tollgate-provider-keys)',
  },
  {
    key: 'leaseNamespace',
    flag: '--lease-namespace <name>',
    env: 'TOLLGATE_LEASE_NAMESPACE',
    help: 'namespace of the leader-election Lease (default: --namespace)',
  },
  {
    key: 'leaseName',
    flag: '--lease-name <name>',
    env: 'TOLLGATE_LEASE_NAME',
    help: 'name of the leader-election Lease (default tollgate-operator)',
  },
  {
    key: 'leaseDurationSeconds',
    flag: '--lease-duration-seconds <s>',
    env: 'TOLLGATE_LEASE_DURATION_SECONDS',
    help: 'how long a leader that stopped renewing keeps the Lease (default 15)',
  },
  {
    key: 'podName',
    flag: '--pod-name <name>',
    env: 'TOLLGATE_POD_NAME',
    help: 'identity in the leader election (default: host name and process id)',
  },
  {
    key: 'kubeconfig',
    flag: '--kubeconfig <file>',
    env: 'TOLLGATE_KUBECONFIG',
    help: "kubeconfig file to use; without it, KUBECONFIG, then the pod's service account",
  },
  {
    key: 'redisUrl',
    flag: '--redis-url <url>',
    env: 'TOLLGATE_REDIS_URL',
    help: 'Redis the gateways share: users, key hashes, budgets, usage (required)',
  },
  {
    key: 'statusPeriodSeconds',
    flag: '--status-period-seconds <s>',
    env: 'TOLLGATE_STATUS_PERIOD_SECONDS',
    help: 'how often usage (spent, remaining, requests) and Programmed are brought into status (default 15)',
  },
  { key: 'logLevel', flag: '--log-level <level>', env: 'TOLLGATE_LOG_LEVEL', help: `log level: ${LOG_LEVELS.join(', ')} (default info)` },
  {
    key: 'healthPort',
    flag: '--health-port <port>',
    env: 'TOLLGATE_HEALTH_PORT',
    help: 'port of /healthz, /readyz and /metrics (default 8081; 0: any free port, logged)',
  },
  {
    key: 'healthHost',
    flag: '--health-host <address>',
    env: 'TOLLGATE_HEALTH_HOST',
    help: 'address the health port listens on (default 0.0.0.0; :: for IPv6)',
  },
] as const satisfies readonly { key: keyof z.input<typeof Fields>; flag: string; env: string; help: string }[];

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
  const raw: Record<string, unknown> = {};
  for (const option of OPERATOR_OPTIONS) {
    const value = flags[option.key] ?? env[option.env];
    if (value !== undefined && value !== '') raw[option.key] = value;
  }
  const parsed = Fields.safeParse(raw);
  if (!parsed.success)
    throw new OperatorSettingsError(`Invalid settings:\n${parsed.error.issues.map((issue) => describeIssue(issue, raw)).join('\n')}`);
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

function describeIssue(issue: z.core.$ZodIssue, raw: Record<string, unknown>): string {
  const option = OPERATOR_OPTIONS.find((o) => o.key === issue.path[0]);
  const where = option ? `${option.flag.split(' ')[0]} (${option.env})` : 'settings';
  const missing = option !== undefined && raw[option.key] === undefined;
  return `  ${where}: ${missing ? 'is required' : issue.message}`;
}
