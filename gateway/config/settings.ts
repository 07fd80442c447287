// Process settings of `tollgate gateway`: read once at start-up from flags and environment
// variables (flags win), validated by one schema, then frozen. Nothing else reads process.env.
import { z } from 'zod';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const GatewaySettings = z.strictObject({
  config: z.string({ message: 'is required: the path of the configuration file' }).min(1, 'is required: the path of the configuration file'),
  host: z.string().min(1).default('0.0.0.0'),
  port: Int(0, 65_535).default(8080),
  bodyLimit: Int(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  maxAttempts: Int(1, 10).default(3),
  failureThreshold: Int(1, 100).default(3),
  cooldownSeconds: z.coerce.number().min(0).max(3600).default(30),
});
export type GatewaySettings = Readonly<z.output<typeof GatewaySettings>>;

/** Flag name, environment variable and help of each setting, for the CLI and its --help. */
export const GATEWAY_OPTIONS = [
  { key: 'config', flag: '-c, --config <file>', env: 'TOLLGATE_CONFIG', help: 'configuration file (YAML) with the models: list' },
  { key: 'host', flag: '--host <address>', env: 'TOLLGATE_HOST', help: 'address to listen on (default 0.0.0.0)' },
  { key: 'port', flag: '-p, --port <port>', env: 'TOLLGATE_PORT', help: 'port to listen on (default 8080)' },
  { key: 'bodyLimit', flag: '--body-limit <bytes>', env: 'TOLLGATE_BODY_LIMIT', help: 'largest request body accepted, in bytes (default 10485760); larger gets 413' },
  { key: 'logLevel', flag: '--log-level <level>', env: 'TOLLGATE_LOG_LEVEL', help: `log level: ${LOG_LEVELS.join(', ')} (default info)` },
  { key: 'maxAttempts', flag: '--max-attempts <n>', env: 'TOLLGATE_MAX_ATTEMPTS', help: 'providers tried at most for one request before failing with 502/504 (default 3)' },
  { key: 'failureThreshold', flag: '--failure-threshold <n>', env: 'TOLLGATE_FAILURE_THRESHOLD', help: 'consecutive failures after which a provider sits out (default 3)' },
  { key: 'cooldownSeconds', flag: '--cooldown-seconds <s>', env: 'TOLLGATE_COOLDOWN_SECONDS', help: 'how long a failing provider sits out, in seconds (default 30)' },
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
