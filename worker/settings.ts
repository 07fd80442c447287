// Process settings of `tollgate router-worker`, declared like the gateway's (core/settings.ts).
// Where the worker finds Redis and the routers is the gateway's own declaration of those
// settings, so the two cannot drift; what is the worker's alone is declared here.
import { z } from 'zod';
import { describeIssues, LOG_LEVEL_SETTING, optionsOf, readRaw, schemaOf, type Settings } from '../core/settings.ts';
import { GATEWAY_SETTINGS } from '../gateway/config/settings.ts';
import { WORKER_DEFAULTS } from '../gateway/queue/worker-defaults.ts';

const {
  redisUrl,
  redisPassword,
  redisSentinelPassword,
  kubernetes,
  namespace,
  routingConfigMap,
  providerKeysSecret,
  kubeconfig,
  redisCommandTimeoutMs,
} = GATEWAY_SETTINGS;

export const WORKER_SETTINGS = {
  redisUrl: {
    ...redisUrl,
    schema: redisUrl.schema.unwrap(),
    help: 'Redis the gateways share: the routing queues router.<model_id>, the provider slots and metrics, and (file mode) the catalog of routers',
    doc: 'Redis the gateways share: the routing queues `router.<model_id>`, the provider slots and their live metrics, and in file mode the catalog the routers are read from.',
    defaultText: undefined,
  },
  redisPassword,
  redisSentinelPassword,
  routers: {
    schema: z
      .string()
      .transform((text) =>
        text
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== ''),
      )
      .optional(),
    value: '<names>',
    env: 'TOLLGATE_WORKER_ROUTERS',
    help: 'routers served, by name, comma-separated (per-model scaling); without it, every router',
    defaultText: 'every router',
  },
  workers: {
    schema: z.coerce.number().int().min(1).max(64).default(1),
    value: '<n>',
    env: 'TOLLGATE_WORKERS',
    help: 'workers in this process, each reading the streams on a connection of its own',
  },
  claimIdleSeconds: {
    schema: z.coerce
      .number()
      .min(0.1)
      .max(3600)
      .default(WORKER_DEFAULTS.claimIdleMs / 1000),
    value: '<s>',
    env: 'TOLLGATE_CLAIM_IDLE_SECONDS',
    help: 'an entry another worker read and left unanswered this long is taken over (that worker presumed dead)',
  },
  host: {
    schema: z.string().min(1).default('0.0.0.0'),
    value: '<address>',
    env: 'TOLLGATE_HOST',
    help: 'address of /metrics, /healthz and /readyz',
  },
  port: {
    schema: z.coerce.number().int().min(0).max(65_535).default(9091),
    short: '-p',
    value: '<port>',
    env: 'TOLLGATE_PORT',
    help: 'port of /metrics, /healthz and /readyz',
  },
  logLevel: LOG_LEVEL_SETTING,
  redisCommandTimeoutMs: {
    schema: redisCommandTimeoutMs.schema,
    value: redisCommandTimeoutMs.value,
    env: redisCommandTimeoutMs.env,
    help: 'a Redis command not answered within this time fails, and the worker tries again (a blocking read waits its block time more)',
  },
  kubernetes: { ...kubernetes, help: 'Kubernetes mode: routers from the routing ConfigMap the operator writes (needs --namespace)' },
  namespace,
  routingConfigMap,
  providerKeysSecret,
  kubeconfig,
} as const satisfies Settings;

const WorkerSettingsFields = schemaOf(WORKER_SETTINGS);
export const WorkerSettings = WorkerSettingsFields.superRefine((s, context) => {
  if (s.kubernetes && s.namespace === undefined)
    context.addIssue({
      code: 'custom',
      path: ['namespace'],
      message: 'required with --kubernetes: the namespace of the routing ConfigMap',
    });
});
export type WorkerSettings = Readonly<z.output<typeof WorkerSettings>>;

export const WORKER_OPTIONS = optionsOf(WORKER_SETTINGS);

export class WorkerSettingsError extends Error {
  override name = 'WorkerSettingsError';
}

export function readWorkerSettings(flags: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): WorkerSettings {
  const raw = readRaw(WORKER_SETTINGS, flags, env);
  const parsed = WorkerSettings.safeParse(raw);
  if (!parsed.success) throw new WorkerSettingsError(describeIssues(WORKER_SETTINGS, parsed.error.issues, raw));
  return Object.freeze(parsed.data);
}
