// Where Redis is, as the settings name it: one address (`redis://`, `rediss://` with TLS), or a
// primary that Redis Sentinel watches (`redis+sentinel://`, `rediss+sentinel://`), which the
// clients ask the Sentinels for, and ask again after a failover (docs/redis.md). Passwords may come
// from the environment (a Secret) rather than the URL.
//
//   redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/<master name>[/<db>]
//
// The Sentinels' port defaults to 26379. The user and password are the data nodes' (the primary's
// and replicas'); the Sentinels' own password is `sentinelPassword` (TOLLGATE_REDIS_SENTINEL_PASSWORD).
import type { RedisOptions } from 'ioredis';

export const REDIS_URL_PATTERN = /^rediss?(\+sentinel)?:\/\//;
const SENTINEL_URL = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/@]+)\/([^/?#]+)(?:\/(\d+))?\/?$/;
const DEFAULT_SENTINEL_PORT = 26379;

/** Passwords from the environment, when they are not in the URL (a Secret's). */
export interface RedisCredentials {
  /** The data nodes' password: used when the URL holds none. */
  readonly password?: string | undefined;
  /** The Sentinels' password (Sentinel mode only). */
  readonly sentinelPassword?: string | undefined;
}

export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

export type RedisTarget =
  | { readonly mode: 'single'; readonly url: string; readonly password: string | undefined }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly SentinelAddress[];
      readonly master: string;
      readonly db: number;
      readonly username: string | undefined;
      readonly password: string | undefined;
      readonly sentinelPassword: string | undefined;
      readonly tls: boolean;
    };

export class RedisTargetError extends Error {
  override name = 'RedisTargetError';
}

/** A Sentinel's `host`, `host:port`, `[v6]` or `[v6]:port`. */
function sentinelAddress(text: string): SentinelAddress {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+))(?::(\d+))?$/.exec(text.trim());
  if (!match) throw new RedisTargetError(`"${text}" is not a Sentinel's host[:port]`);
  const port = match[3] === undefined ? DEFAULT_SENTINEL_PORT : Number(match[3]);
  if (port < 1 || port > 65535) throw new RedisTargetError(`"${text}": the port is not 1-65535`);
  return { host: match[1] ?? match[2]!, port };
}

/** The target a URL names; RedisTargetError when it cannot be used, with why. */
export function redisTarget(url: string, credentials: RedisCredentials = {}): RedisTarget {
  if (!REDIS_URL_PATTERN.test(url))
    throw new RedisTargetError('must be a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL');
  if (!url.includes('+sentinel://')) return { mode: 'single', url, password: credentials.password };
  const match = SENTINEL_URL.exec(url);
  if (!match)
    throw new RedisTargetError('a Sentinel URL is redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/<master name>[/<db>]');
  const [, scheme, auth, hosts, master, db] = match;
  const at = auth === undefined ? -1 : auth.indexOf(':');
  const decode = (text: string | undefined) => (text === undefined || text === '' ? undefined : decodeURIComponent(text));
  return {
    mode: 'sentinel',
    sentinels: hosts!.split(',').map(sentinelAddress),
    master: decodeURIComponent(master!),
    db: db === undefined ? 0 : Number(db),
    username: decode(at < 0 ? auth : auth!.slice(0, at)),
    password: decode(at < 0 ? undefined : auth!.slice(at + 1)) ?? credentials.password,
    sentinelPassword: credentials.sentinelPassword,
    tls: scheme === 'rediss',
  };
}

/** ioredis' arguments for the target: the URL and options, or the Sentinel options. */
export function clientArguments(target: RedisTarget, options: RedisOptions): [string, RedisOptions] | [RedisOptions] {
  if (target.mode === 'single') return [target.url, target.password === undefined ? options : { password: target.password, ...options }];
  return [
    {
      ...options,
      sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: target.master,
      role: 'master',
      db: target.db,
      username: target.username,
      password: target.password,
      sentinelPassword: target.sentinelPassword,
      ...(target.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
      // A failover is followed as soon as the Sentinels announce it, not only once the old primary stops answering.
      failoverDetector: true,
    },
  ];
}

/** The target for logs and messages: addresses and names, never a password. */
export function describeTarget(target: RedisTarget): string {
  if (target.mode === 'single') {
    const parsed = new URL(target.url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  }
  const sentinels = target.sentinels.map((s) => (s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`)).join(',');
  return `${target.tls ? 'rediss' : 'redis'}+sentinel://${sentinels}/${target.master}/${target.db}`;
}
