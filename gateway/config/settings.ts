// Process settings of `tollgate gateway`: read once at start-up from flags and environment
// variables (flags win), validated by one schema, then frozen. Nothing else reads process.env.
import { z } from 'zod';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const GatewaySettings = z.strictObject({
  config: z.string().min(1).optional(),
  host: z.string().min(1).default('0.0.0.0'),
  port: Int(0, 65_535).default(8080),
  bodyLimit: Int(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  maxAttempts: Int(1, 10).default(3),
  failureThreshold: Int(1, 100).default(3),
  cooldownSeconds: z.coerce.number().min(0).max(3600).default(30),
  redisUrl: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  adminKey: z.string().min(1).optional(),
  adminKeyFile: z.string().min(1).optional(),
  failOpen: z.preprocess((v) => (typeof v === 'boolean' ? String(v) : v), z.enum(['true', 'false'])).default('false').transform((v) => v === 'true'),
  usageRetentionDays: z.coerce.number().min(1).max(3650).default(30),
  reservationTtlSeconds: Int(10, 86_400).default(900),
});
export type GatewaySettings = Readonly<z.output<typeof GatewaySettings>>;

/** Flag name, environment variable and help of each setting, for the CLI and its --help. */
export const GATEWAY_OPTIONS = [
  { key: 'config', flag: '-c, --config <file>', env: 'TOLLGATE_CONFIG', help: 'configuration file (YAML) whose models: seed the catalog at start-up' },
  { key: 'host', flag: '--host <address>', env: 'TOLLGATE_HOST', help: 'address to listen on (default 0.0.0.0)' },
  { key: 'port', flag: '-p, --port <port>', env: 'TOLLGATE_PORT', help: 'port to listen on (default 8080)' },
  { key: 'bodyLimit', flag: '--body-limit <bytes>', env: 'TOLLGATE_BODY_LIMIT', help: 'largest request body accepted, in bytes (default 10485760); larger gets 413' },
  { key: 'logLevel', flag: '--log-level <level>', env: 'TOLLGATE_LOG_LEVEL', help: `log level: ${LOG_LEVELS.join(', ')} (default info)` },
  { key: 'maxAttempts', flag: '--max-attempts <n>', env: 'TOLLGATE_MAX_ATTEMPTS', help: 'providers tried at most for one request before failing with 502/504 (default 3)' },
  { key: 'failureThreshold', flag: '--failure-threshold <n>', env: 'TOLLGATE_FAILURE_THRESHOLD', help: 'consecutive failures after which a provider sits out (default 3)' },
  { key: 'cooldownSeconds', flag: '--cooldown-seconds <s>', env: 'TOLLGATE_COOLDOWN_SECONDS', help: 'how long a failing provider sits out, in seconds (default 30)' },
  { key: 'redisUrl', flag: '--redis-url <url>', env: 'TOLLGATE_REDIS_URL', help: 'Redis shared by all gateways (users, budgets, usage, catalog); without it, state is in memory' },
  { key: 'adminKey', flag: '--admin-key <key>', env: 'TOLLGATE_ADMIN_KEY', help: 'bootstrap admin API key (tg-...); prefer the variable or --admin-key-file over the flag' },
  { key: 'adminKeyFile', flag: '--admin-key-file <file>', env: 'TOLLGATE_ADMIN_KEY_FILE', help: 'file holding the bootstrap admin API key' },
  { key: 'failOpen', flag: '--fail-open <bool>', env: 'TOLLGATE_FAIL_OPEN', help: 'when Redis is down, serve priced routers without charging budgets (default false: answer 503)' },
  { key: 'usageRetentionDays', flag: '--usage-retention-days <days>', env: 'TOLLGATE_USAGE_RETENTION_DAYS', help: 'how long usage records are kept (default 30)' },
  { key: 'reservationTtlSeconds', flag: '--reservation-ttl-seconds <s>', env: 'TOLLGATE_RESERVATION_TTL_SECONDS', help: 'after this long a budget hold that was never settled (a crashed gateway) is released (default 900)' },
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
