// Process settings of `tollgate gateway`: read once at start-up from flags and environment
// variables (flags win), validated by one schema, then frozen. Nothing else reads process.env.
// This is the one registry of them: each group is declared in its own file (settings/*.ts) and
// gathered here in the order --help and the docs list them; bin/settings-docs.ts and the command
// line read GATEWAY_SETTINGS, never the groups.
import { hostname } from 'node:os';
import { z } from 'zod';
import { describeIssues, LOG_LEVEL_SETTING, optionsOf, readRaw, schemaOf, type Settings } from '../../core/settings.ts';
import { ALERT_SETTINGS } from './settings/alerts.ts';
import { FAILURE_SETTINGS } from './settings/failure.ts';
import { HTTP_SETTINGS } from './settings/http.ts';
import { IDENTITY_SETTINGS } from './settings/identity.ts';
import { KUBERNETES_SETTINGS } from './settings/kubernetes.ts';
import { QUEUE_SETTINGS } from './settings/queue.ts';
import { REDIS_URL_SETTING, STORE_SETTINGS } from './settings/store.ts';
import { REDIS_DURABILITY_SETTINGS, REDIS_PASSWORD_SETTINGS } from '../../core/settings.ts';
import { Bool } from './settings/value-schemas.ts';

/** Every setting of `tollgate gateway`, once: flags, variables, --help and docs come from here. */
export const GATEWAY_SETTINGS = {
  config: {
    schema: z.string().min(1).optional(),
    short: '-c',
    value: '<file>',
    env: 'TOLLGATE_CONFIG',
    help: 'configuration file (YAML) whose models: seed the catalog at start-up',
    doc: 'The configuration file. Without it, the gateway serves the routers already in the store.',
  },
  ...HTTP_SETTINGS,
  logLevel: LOG_LEVEL_SETTING,
  ...FAILURE_SETTINGS,
  redisUrl: REDIS_URL_SETTING,
  ...REDIS_PASSWORD_SETTINGS,
  ...REDIS_DURABILITY_SETTINGS,
  ...ALERT_SETTINGS,
  ...STORE_SETTINGS,
  ...QUEUE_SETTINGS,
  ...IDENTITY_SETTINGS,
  playground: {
    schema: Bool(true),
    value: '<bool>',
    env: 'TOLLGATE_PLAYGROUND',
    help: 'serve the Playground web UI under /playground (build it with npm run build)',
    doc: 'Serve the [Playground](playground.md) web UI under `/playground` (built by `npm run build`).',
  },
  ...KUBERNETES_SETTINGS,
} as const satisfies Settings;

const SettingsFields = schemaOf(GATEWAY_SETTINGS);

/**
 * In Kubernetes mode routers and providers come from the routing ConfigMap (so no --config), and
 * users and budgets from Redis (so --redis-url). The pod name defaults to the host name, which
 * is the pod's name in a pod. Outside Kubernetes mode the Kubernetes settings are ignored.
 */
export const GatewaySettings = SettingsFields.superRefine((s, context) => {
  const problem = (key: keyof typeof s, message: string) => context.addIssue({ code: 'custom', path: [key], message });
  if (s.routerWorkers > 0 && s.redisUrl === undefined)
    problem('routerWorkers', 'needs --redis-url: router workers take requests from the queues in Redis');
  // An unsigned alert can be sent by anyone who finds the receiver: unsigned only when asked for.
  if (s.alertWebhookUrl !== undefined && s.alertWebhookSecret === undefined && s.alertWebhookUnsigned !== true)
    problem(
      'alertWebhookSecret',
      "required with --alert-webhook-url (the signing key, 16 characters or more), so that the receiver can tell alerts from this gateway from anyone else's; set --alert-webhook-unsigned true to send them unsigned",
    );
  if (s.alertWebhookSecret !== undefined && s.alertWebhookUnsigned === true)
    problem('alertWebhookUnsigned', 'contradicts --alert-webhook-secret: alerts are either signed or unsigned, set one of them');
  if (!s.kubernetes) return;
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

/** Flag, variable and --help line of each setting, for the command line. */
export const GATEWAY_OPTIONS = optionsOf(GATEWAY_SETTINGS);

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** Merges flags over environment variables and validates the result. */
export function readSettings(flags: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): GatewaySettings {
  const raw = readRaw(GATEWAY_SETTINGS, flags, env);
  const parsed = GatewaySettings.safeParse(raw);
  if (!parsed.success) throw new SettingsError(describeIssues(GATEWAY_SETTINGS, parsed.error.issues, raw));
  return Object.freeze(parsed.data);
}
