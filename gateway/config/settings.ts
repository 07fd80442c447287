// Process settings of `tollgate gateway`: read once at start-up from flags and environment
// variables (flags win), validated by one schema, then frozen. Nothing else reads process.env.
import { hostname } from 'node:os';
import { z } from 'zod';
import { LOG_LEVELS } from '../../core/log.ts';
import { DEFAULT_UPSTREAM_LIMITS } from '../providers/upstream-limits.ts';

const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** true or false, as a flag (a boolean) or a variable (the text). */
const Bool = (fallback: boolean) =>
  z
    .preprocess((v) => (typeof v === 'boolean' ? String(v) : v), z.enum(['true', 'false']))
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');
/** A namespace name (an RFC 1123 label) or a ConfigMap or Secret name (an RFC 1123 subdomain). */
const DnsLabel = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name (lower-case letters, digits and -)');
const DnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Kubernetes object name (lower-case letters, digits, - and .)');

const SettingsFields = z.strictObject({
  config: z.string().min(1).optional(),
  host: z.string().min(1).default('0.0.0.0'),
  port: Int(0, 65_535).default(8080),
  bodyLimit: Int(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  maxUpstreamBodyBytes: Int(1024, 2 ** 32).default(DEFAULT_UPSTREAM_LIMITS.maxBodyBytes),
  maxUpstreamEventBytes: Int(1024, 2 ** 32).default(DEFAULT_UPSTREAM_LIMITS.maxEventBytes),
  maxAttempts: Int(1, 10).default(3),
  failureThreshold: Int(1, 100).default(3),
  cooldownSeconds: z.coerce.number().min(0).max(3600).default(30),
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  adminKey: z.string().min(1).optional(),
  adminKeyFile: z.string().min(1).optional(),
  failOpen: Bool(false),
  usageRetentionDays: z.coerce.number().min(1).max(3650).default(30),
  reservationTtlSeconds: Int(10, 86_400).default(900),
  leaseRequests: Int(0, 10_000).default(32),
  promptRatioSyncSeconds: z.coerce.number().min(0.01).max(3600).default(5),
  redisCommandTimeoutMs: Int(10, 60_000).default(1000),
  maxKeysPerUser: Int(1, 100_000).default(100),
  playground: Bool(true),
  kubernetes: Bool(false),
  namespace: DnsLabel.optional(),
  routingConfigMap: DnsSubdomain.default('tollgate-routing'),
  providerKeysSecret: DnsSubdomain.default('tollgate-provider-keys'),
  kubeconfig: z.string().min(1).optional(),
  podName: z.string().min(1).max(253).optional(),
  resourceNamespace: DnsLabel.optional(),
});

/**
 * In Kubernetes mode routers and providers come from the routing ConfigMap (so no --config), and
 * users and budgets from Redis (so --redis-url). The pod name defaults to the host name, which
 * is the pod's name in a pod. Outside Kubernetes mode the Kubernetes settings are ignored.
 */
export const GatewaySettings = SettingsFields.superRefine((s, context) => {
  if (!s.kubernetes) return;
  const problem = (key: keyof typeof s, message: string) => context.addIssue({ code: 'custom', path: [key], message });
  if (s.config !== undefined)
    problem(
      'config',
      'not allowed with --kubernetes: routers and providers come from the routing ConfigMap (ModelRouter and ModelProvider resources)',
    );
  if (s.redisUrl === undefined)
    problem('redisUrl', 'required with --kubernetes: users and budgets live in Redis, shared by every gateway pod');
  if (s.namespace === undefined)
    problem('namespace', 'required with --kubernetes: the namespace of the routing ConfigMap and the provider keys Secret');
}).transform((s) => (s.kubernetes ? { ...s, podName: s.podName ?? hostname(), resourceNamespace: s.resourceNamespace ?? s.namespace } : s));
export type GatewaySettings = Readonly<z.output<typeof GatewaySettings>>;

/** Flag name, environment variable and help of each setting, for the CLI and its --help. */
export const GATEWAY_OPTIONS = [
  {
    key: 'config',
    flag: '-c, --config <file>',
    env: 'TOLLGATE_CONFIG',
    help: 'configuration file (YAML) whose models: seed the catalog at start-up',
  },
  { key: 'host', flag: '--host <address>', env: 'TOLLGATE_HOST', help: 'address to listen on (default 0.0.0.0)' },
  { key: 'port', flag: '-p, --port <port>', env: 'TOLLGATE_PORT', help: 'port to listen on (default 8080)' },
  {
    key: 'bodyLimit',
    flag: '--body-limit <bytes>',
    env: 'TOLLGATE_BODY_LIMIT',
    help: 'largest request body accepted, in bytes (default 10485760); larger gets 413',
  },
  {
    key: 'maxUpstreamBodyBytes',
    flag: '--max-upstream-body-bytes <bytes>',
    env: 'TOLLGATE_MAX_UPSTREAM_BODY_BYTES',
    help: 'largest whole answer read from a backend, in bytes (default 67108864); larger fails over, or 502',
  },
  {
    key: 'maxUpstreamEventBytes',
    flag: '--max-upstream-event-bytes <bytes>',
    env: 'TOLLGATE_MAX_UPSTREAM_EVENT_BYTES',
    help: "largest single event of a backend's stream (SSE event, NDJSON line), in characters (default 8388608); larger ends the stream with an error event",
  },
  { key: 'logLevel', flag: '--log-level <level>', env: 'TOLLGATE_LOG_LEVEL', help: `log level: ${LOG_LEVELS.join(', ')} (default info)` },
  {
    key: 'maxAttempts',
    flag: '--max-attempts <n>',
    env: 'TOLLGATE_MAX_ATTEMPTS',
    help: 'providers tried at most for one request before failing with 502/504 (default 3)',
  },
  {
    key: 'failureThreshold',
    flag: '--failure-threshold <n>',
    env: 'TOLLGATE_FAILURE_THRESHOLD',
    help: 'consecutive failures after which a provider sits out (default 3)',
  },
  {
    key: 'cooldownSeconds',
    flag: '--cooldown-seconds <s>',
    env: 'TOLLGATE_COOLDOWN_SECONDS',
    help: 'how long a failing provider sits out, in seconds (default 30)',
  },
  {
    key: 'redisUrl',
    flag: '--redis-url <url>',
    env: 'TOLLGATE_REDIS_URL',
    help: 'Redis shared by all gateways (users, budgets, usage, catalog); without it, state is in memory',
  },
  {
    key: 'adminKey',
    flag: '--admin-key <key>',
    env: 'TOLLGATE_ADMIN_KEY',
    help: 'bootstrap admin API key (tg-...); prefer the variable or --admin-key-file over the flag',
  },
  {
    key: 'adminKeyFile',
    flag: '--admin-key-file <file>',
    env: 'TOLLGATE_ADMIN_KEY_FILE',
    help: 'file holding the bootstrap admin API key',
  },
  {
    key: 'failOpen',
    flag: '--fail-open <bool>',
    env: 'TOLLGATE_FAIL_OPEN',
    help: 'when Redis is down, serve priced routers without charging budgets (default false: answer 503)',
  },
  {
    key: 'usageRetentionDays',
    flag: '--usage-retention-days <days>',
    env: 'TOLLGATE_USAGE_RETENTION_DAYS',
    help: 'how long usage records are kept (default 30)',
  },
  {
    key: 'reservationTtlSeconds',
    flag: '--reservation-ttl-seconds <s>',
    env: 'TOLLGATE_RESERVATION_TTL_SECONDS',
    help: 'after this long a budget hold that was never settled (a crashed gateway) is released (default 900)',
  },
  {
    key: 'leaseRequests',
    flag: '--lease-requests <n>',
    env: 'TOLLGATE_LEASE_REQUESTS',
    help: 'with Redis: budget and rate-limit room a gateway takes ahead, in requests, while a user is far from every limit (default 32; 0 = every admission in Redis)',
  },
  {
    key: 'promptRatioSyncSeconds',
    flag: '--prompt-ratio-sync-seconds <s>',
    env: 'TOLLGATE_PROMPT_RATIO_SYNC_SECONDS',
    help: "how often the learned ratio of backends' prompt tokens to the gateway's count is shared through the store (default 5)",
  },
  {
    key: 'redisCommandTimeoutMs',
    flag: '--redis-command-timeout-ms <ms>',
    env: 'TOLLGATE_REDIS_COMMAND_TIMEOUT_MS',
    help: 'with Redis: a command not answered within this time fails, and the request gets 503 (or is served without accounting, failing open); readiness says not ready until Redis answers again (default 1000)',
  },
  {
    key: 'maxKeysPerUser',
    flag: '--max-keys-per-user <n>',
    env: 'TOLLGATE_MAX_KEYS_PER_USER',
    help: 'most active (unrevoked, unexpired) API keys one user may hold; one more gets 409 key_limit_reached (default 100)',
  },
  {
    key: 'playground',
    flag: '--playground <bool>',
    env: 'TOLLGATE_PLAYGROUND',
    help: 'serve the Playground web UI under /playground (default true; build it with npm run build)',
  },
  {
    key: 'kubernetes',
    flag: '--kubernetes',
    env: 'TOLLGATE_KUBERNETES',
    help: 'Kubernetes mode: serve the routing ConfigMap and the provider keys Secret, watched through the API (needs --namespace and --redis-url; no --config)',
  },
  {
    key: 'namespace',
    flag: '--namespace <name>',
    env: 'TOLLGATE_NAMESPACE',
    help: 'Kubernetes mode: namespace of the routing ConfigMap and the provider keys Secret',
  },
  {
    key: 'routingConfigMap',
    flag: '--routing-config-map <name>',
    env: 'TOLLGATE_ROUTING_CONFIG_MAP',
    help: 'Kubernetes mode: the ConfigMap holding the routing snapshot (default tollgate-routing)',
  },
  {
    key: 'providerKeysSecret',
    flag: '--provider-keys-secret <name>',
    env: 'TOLLGATE_PROVIDER_KEYS_SECRET',
    help: 'Kubernetes mode: the Secret holding the provider keys, by provider id (default tollgate-provider-keys)',
  },
  {
    key: 'kubeconfig',
    flag: '--kubeconfig <file>',
    env: 'TOLLGATE_KUBECONFIG',
    help: "Kubernetes mode: kubeconfig file to use; without it, KUBECONFIG, then the pod's service account",
  },
  {
    key: 'resourceNamespace',
    flag: '--resource-namespace <name>',
    env: 'TOLLGATE_RESOURCE_NAMESPACE',
    help: 'Kubernetes mode: namespace where the admin API writes ModelRouter, ModelProvider and GatewayUser resources (default --namespace)',
  },
  {
    key: 'podName',
    flag: '--pod-name <name>',
    env: 'TOLLGATE_POD_NAME',
    help: 'Kubernetes mode: name this gateway reports the snapshot version it serves under (default the host name)',
  },
] as const satisfies readonly { key: keyof GatewaySettings; flag: string; env: string; help: string }[];

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** Merges flags over environment variables and validates the result. */
export function readSettings(flags: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): GatewaySettings {
  const raw: Record<string, unknown> = {};
  for (const option of GATEWAY_OPTIONS) {
    const value = flags[option.key] ?? env[option.env];
    if (value !== undefined && value !== '') raw[option.key] = value;
  }
  const parsed = GatewaySettings.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const option = GATEWAY_OPTIONS.find((o) => o.key === issue.path[0]);
      return `  ${option ? `${option.flag.split(', ').at(-1)!.split(' ')[0]} (${option.env})` : 'settings'}: ${issue.message}`;
    });
    throw new SettingsError(`Invalid settings:\n${lines.join('\n')}`);
  }
  return Object.freeze(parsed.data);
}
