// Process settings, declared once per setting: its zod schema (type, bounds and default), its
// flag and environment variable, and what it means. From that one declaration come the flags and
// `--help` of the command line, the reading of flags over environment variables, the error lines
// naming what to fix, and the settings tables in the docs (generated; a test fails when the
// committed docs differ). Both planes declare theirs with it: gateway/config/settings.ts and
// operator/settings.ts.
import { redisTarget } from './store/redis/redis-target.ts';
import type { Durability } from './store/redis/redis-durability.ts';
import { z } from 'zod';
import { LOG_LEVELS } from './log.ts';
import { ROUTING_MODES } from './resources/kinds.ts';

export interface Setting<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /** The value's placeholder in `--help` (`<port>`); none for a flag that takes no value (`--kubernetes`). */
  readonly value?: string;
  /** A one-letter alias (`-p`). */
  readonly short?: string;
  readonly env: string;
  /** One line for `--help`. */
  readonly help: string;
  /** The docs table's longer explanation (Markdown); `help` when absent. */
  readonly doc?: string;
  /** How to say a default the schema cannot hold (computed at start-up, or "all namespaces"). */
  readonly defaultText?: string;
  /** The docs table the setting is listed in, when a plane splits its settings over pages. */
  readonly group?: string;
}

export type Settings = Readonly<Record<string, Setting>>;

/** `--log-level`, the same for both planes. */
export const LOG_LEVEL_SETTING = {
  schema: z.enum(LOG_LEVELS).default('info'),
  value: '<level>',
  env: 'TOLLGATE_LOG_LEVEL',
  help: `log level: ${LOG_LEVELS.join(', ')}`,
  doc: `${LOG_LEVELS.map((level) => `\`${level}\``).join(', ')}.`,
} as const satisfies Setting;

/** `--routing-mode`: the gateways apply it, the operator reports it in ModelRouter status; the chart gives both the same value. */
export const ROUTING_MODE_SETTING = {
  schema: z.enum(ROUTING_MODES).default('local'),
  value: '<mode>',
  env: 'TOLLGATE_ROUTING_MODE',
  help: 'routing mode of routers that set none: local (the gateway picks the provider) or queue (router workers do, fleet-wide; needs Redis)',
} as const satisfies Setting;

/** The schema of all the settings, keyed as declared; parse the output of readRaw with it. */
export function schemaOf<T extends Settings>(settings: T): z.ZodObject<{ [K in keyof T]: T[K]['schema'] }, z.core.$strict> {
  const shape = Object.fromEntries(Object.entries(settings).map(([key, setting]) => [key, setting.schema]));
  return z.strictObject(shape) as z.ZodObject<{ [K in keyof T]: T[K]['schema'] }, z.core.$strict>;
}

/** `--body-limit` for `bodyLimit`: the flag is the key, so commander hands back the same key. */
export function longFlag(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** `-p, --port <port>`: the flag as commander takes it and --help shows it. */
export function flagOf(key: string, setting: Setting): string {
  const long = setting.value ? `${longFlag(key)} ${setting.value}` : longFlag(key);
  return setting.short ? `${setting.short}, ${long}` : long;
}

/** The default as text, or undefined when there is none: what --help and the docs say. */
export function defaultOf(setting: Setting): string | undefined {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const parsed = setting.schema.safeParse(undefined);
  return parsed.success && parsed.data !== undefined ? String(parsed.data) : undefined;
}

function required(setting: Setting): boolean {
  return setting.defaultText === undefined && !setting.schema.safeParse(undefined).success;
}

/** One line of --help: the meaning, the default and the variable. */
export function helpOf(setting: Setting): string {
  const fallback = defaultOf(setting);
  const status = required(setting) ? ' (required)' : fallback === undefined ? '' : ` (default ${fallback})`;
  return `${setting.help}${status} [env ${setting.env}]`;
}

/** Flags over environment variables; an empty value counts as unset. */
export function readRaw(settings: Settings, flags: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>) {
  const raw: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(settings)) {
    const value = flags[key] ?? env[setting.env];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  return raw;
}

/** `  --port (TOLLGATE_PORT): <what is wrong>`, one line per issue, naming the flag and the variable. */
export function describeIssues(settings: Settings, issues: readonly z.core.$ZodIssue[], raw: Record<string, unknown>): string {
  const lines = issues.map((issue) => {
    const key = issue.path[0];
    const setting = typeof key === 'string' ? settings[key] : undefined;
    if (setting === undefined || typeof key !== 'string') return `  settings: ${issue.message}`;
    const message = raw[key] === undefined && required(setting) ? 'is required' : issue.message;
    return `  ${longFlag(key)} (${setting.env}): ${message}`;
  });
  return `Invalid settings:\n${lines.join('\n')}`;
}

/** The Markdown table of the settings (of one group), as the docs show it. */
export function settingsTable(settings: Settings, group?: string): string {
  const rows = Object.entries(settings)
    .filter(([, setting]) => setting.group === group)
    .map(([key, setting]) => {
      const fallback = defaultOf(setting);
      const shown = required(setting) ? '(required)' : fallback === undefined ? '(none)' : (setting.defaultText ?? `\`${fallback}\``);
      return [`\`${flagOf(key, setting)}\``, `\`${setting.env}\``, shown, setting.doc ?? `${capitalise(setting.help)}.`];
    });
  return markdownTable(['Flag', 'Variable', 'Default', 'Meaning'], rows);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const cellOf = (cell: string) => cell.replaceAll('|', '\\|');
  const line = (cells: readonly string[]) => `| ${cells.map(cellOf).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Each setting as the command line takes it: its key, flag, variable and --help line. */
export function optionsOf<T extends Settings>(settings: T): { key: keyof T & string; flag: string; env: string; help: string }[] {
  return Object.entries(settings).map(([key, setting]) => ({ key, flag: flagOf(key, setting), env: setting.env, help: helpOf(setting) }));
}

/** A Redis URL: one address, or a primary behind Redis Sentinel (core/store/redis/redis-target.ts). */
export const RedisUrl = z.string().superRefine((url, context) => {
  try {
    redisTarget(url);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/** Passwords of Redis that are better kept out of the URL: given by the environment (a Secret), never as flags. */
export const REDIS_PASSWORD_SETTINGS = {
  redisPassword: {
    schema: z.string().min(1).optional(),
    value: '<password>',
    env: 'TOLLGATE_REDIS_PASSWORD',
    help: "Redis' password, when the URL holds none (prefer the variable, from a Secret, to the flag)",
    doc: 'The password of Redis (in Sentinel mode, of its primary and replicas), when `--redis-url` holds none: set it from a Secret rather than on the command line.',
  },
  redisSentinelPassword: {
    schema: z.string().min(1).optional(),
    value: '<password>',
    env: 'TOLLGATE_REDIS_SENTINEL_PASSWORD',
    help: "the Sentinels' own password (redis+sentinel:// URLs)",
    doc: "The Sentinels' own password (`requirepass` of the Sentinels), for a `redis+sentinel://` URL.",
  },
} as const satisfies Settings;

/**
 * The bound on what a Redis failover may lose (core/store/redis/redis-durability.ts): shared by
 * the gateways, which settle and admit, and the operator, which writes users, keys and budgets.
 */
export const REDIS_DURABILITY_SETTINGS = {
  redisWaitReplicas: {
    schema: z.coerce.number().int().min(0).max(16).default(0),
    value: '<n>',
    env: 'TOLLGATE_REDIS_WAIT_REPLICAS',
    help: 'replicas that must confirm each charge and each user, key or budget change before it counts (Redis WAIT); 0: off',
    doc:
      'The failover loss bound ([redis.md](redis.md#what-a-failover-may-lose)): each admission, settlement and user, key or team change counts only once this many replicas ' +
      'confirm it (Redis `WAIT`), so a failover cannot reset `spent` below what callers were served. Not confirmed in time: the admission or the change answers 503, and a ' +
      'settlement is sent again. Budget leases are then not taken (`--lease-requests` is ignored). `0`: off, as plain Redis.',
  },
  redisWaitTimeoutMs: {
    schema: z.coerce.number().int().min(1).max(10_000).default(500),
    value: '<ms>',
    env: 'TOLLGATE_REDIS_WAIT_TIMEOUT_MS',
    help: 'with --redis-wait-replicas: how long to wait for the replicas to confirm a write',
    doc: 'With `--redis-wait-replicas`: how long a write waits for its replicas (the `WAIT` timeout); the writes wait on a connection of their own.',
  },
  redisSettleRetrySeconds: {
    schema: z.coerce.number().int().min(1).max(86_400).default(120),
    value: '<s>',
    env: 'TOLLGATE_REDIS_SETTLE_RETRY_SECONDS',
    help: 'with --redis-wait-replicas: how long a settlement not yet confirmed is sent again before it is given up',
    doc:
      'With `--redis-wait-replicas`: how long a settlement the replicas have not confirmed is sent again (4 times a second) before it is given up and logged, ' +
      "and how long a gateway's start-up writes (the bootstrap admin, the configuration file's users) are made again (once a second) before the start fails with one line. Keep it above " +
      "your Sentinels' failover time. Each settlement leaves a mark in Redis for this long plus a minute, so that one sent twice is charged once.",
  },
} as const satisfies Settings;

/** The store's durability option from the settings above (off when no replica is asked for). */
export function durabilityOf(settings: {
  redisWaitReplicas: number;
  redisWaitTimeoutMs: number;
  redisSettleRetrySeconds: number;
}): Durability {
  return {
    replicas: settings.redisWaitReplicas,
    timeoutMs: settings.redisWaitTimeoutMs,
    retryForMs: settings.redisSettleRetrySeconds * 1000,
  };
}
