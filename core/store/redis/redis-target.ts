// Where Redis is, as the settings name it: one address (`redis://`, `rediss://` with TLS), a
// primary that Redis Sentinel watches (`redis+sentinel://`, `rediss+sentinel://`), which the
// clients ask the Sentinels for, and ask again after a failover, or a Redis Cluster
// (`redis+cluster://`, `rediss+cluster://`), whose slots the clients learn from any of the nodes
// listed (docs/redis.md). Passwords may come from the environment (a Secret) rather than the URL.
//
//   redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/<master name>[/<db>]
//   redis+cluster://[user[:password]@]host[:port][,host[:port]...]
//
// The Sentinels' port defaults to 26379, a cluster node's to 6379. The user and password are the
// data nodes' (the primary's and replicas'); the Sentinels' own password is `sentinelPassword`
// (TOLLGATE_REDIS_SENTINEL_PASSWORD). A cluster has one database: no `/<db>`.
import type { ClusterOptions, RedisOptions } from 'ioredis';

export const REDIS_URL_PATTERN = /^rediss?(\+sentinel|\+cluster)?:\/\//;
const SENTINEL_URL = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/@]+)\/([^/?#]+)(?:\/(\d+))?\/?$/;
const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/@]+)\/?$/;
const DEFAULT_SENTINEL_PORT = 26379;
const DEFAULT_NODE_PORT = 6379;

/** Passwords from the environment, when they are not in the URL (a Secret's). */
export interface RedisCredentials {
  /** The data nodes' password: used when the URL holds none. */
  readonly password?: string | undefined;
  /** The Sentinels' password (Sentinel mode only). */
  readonly sentinelPassword?: string | undefined;
}

/** A Sentinel's or a cluster node's address. */
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
    }
  | {
      readonly mode: 'cluster';
      /** Nodes to learn the slots from: any of them will do. */
      readonly nodes: readonly SentinelAddress[];
      readonly username: string | undefined;
      readonly password: string | undefined;
      readonly tls: boolean;
    };

export class RedisTargetError extends Error {
  override name = 'RedisTargetError';
}

/** A Sentinel's or a node's `host`, `host:port`, `[v6]` or `[v6]:port`. */
function address(text: string, what: string, defaultPort: number): SentinelAddress {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+))(?::(\d+))?$/.exec(text.trim());
  if (!match) throw new RedisTargetError(`"${text}" is not a ${what}'s host[:port]`);
  const port = match[3] === undefined ? defaultPort : Number(match[3]);
  if (port < 1 || port > 65535) throw new RedisTargetError(`"${text}": the port is not 1-65535`);
  return { host: match[1] ?? match[2]!, port };
}

/** The target a URL names; RedisTargetError when it cannot be used, with why. */
export function redisTarget(url: string, credentials: RedisCredentials = {}): RedisTarget {
  if (!REDIS_URL_PATTERN.test(url))
    throw new RedisTargetError(
      'must be a redis://, rediss://, redis+sentinel://, rediss+sentinel://, redis+cluster:// or rediss+cluster:// URL',
    );
  if (url.includes('+cluster://')) return clusterTarget(url, credentials);
  if (!url.includes('+sentinel://')) return { mode: 'single', url, password: credentials.password };
  const match = SENTINEL_URL.exec(url);
  if (!match)
    throw new RedisTargetError('a Sentinel URL is redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/<master name>[/<db>]');
  const [, scheme, auth, hosts, master, db] = match;
  const { username, password } = userAndPassword(auth);
  return {
    mode: 'sentinel',
    sentinels: hosts!.split(',').map((text) => address(text, 'Sentinel', DEFAULT_SENTINEL_PORT)),
    master: decodeURIComponent(master!),
    db: db === undefined ? 0 : Number(db),
    username,
    password: password ?? credentials.password,
    sentinelPassword: credentials.sentinelPassword,
    tls: scheme === 'rediss',
  };
}

function clusterTarget(url: string, credentials: RedisCredentials): RedisTarget {
  const match = CLUSTER_URL.exec(url);
  if (!match) throw new RedisTargetError('a cluster URL is redis+cluster://[user[:password]@]host[:port][,host[:port]...]');
  const [, scheme, auth, hosts] = match;
  const { username, password } = userAndPassword(auth);
  return {
    mode: 'cluster',
    nodes: hosts!.split(',').map((text) => address(text, 'cluster node', DEFAULT_NODE_PORT)),
    username,
    password: password ?? credentials.password,
    tls: scheme === 'rediss',
  };
}

/** The `user[:password]` part of a URL, decoded; an empty one is none. */
function userAndPassword(auth: string | undefined): { username: string | undefined; password: string | undefined } {
  const at = auth === undefined ? -1 : auth.indexOf(':');
  const decode = (text: string | undefined) => (text === undefined || text === '' ? undefined : decodeURIComponent(text));
  return { username: decode(at < 0 ? auth : auth!.slice(0, at)), password: decode(at < 0 ? undefined : auth!.slice(at + 1)) };
}

/** ioredis' arguments for a cluster: its nodes, and the options of the cluster and of each node's connection. */
export function clusterArguments(
  target: Extract<RedisTarget, { mode: 'cluster' }>,
  options: RedisOptions,
): [{ host: string; port: number }[], ClusterOptions] {
  const { enableOfflineQueue, ...perNode } = options;
  return [
    target.nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      redisOptions: {
        ...perNode,
        username: target.username,
        password: target.password,
        ...(target.tls ? { tls: {} } : {}),
      },
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      // A slot on its way to another node (resharding) answers TRYAGAIN to a script whose keys are
      // split for a moment: sent again shortly, for up to 10 s (a slot holding many keys takes a
      // while to move). It did not run, so sending it again is safe.
      retryDelayOnTryAgain: 50,
      maxRedirections: 200,
      // After a failover, the slots are learned again from the nodes; until then MOVED is followed.
      retryDelayOnClusterDown: 100,
      retryDelayOnFailover: 100,
      clusterRetryStrategy: options.retryStrategy ? (attempt: number) => options.retryStrategy!(attempt) ?? null : undefined,
      slotsRefreshTimeout: 2000,
    },
  ];
}

/** ioredis' arguments for the target: the URL and options, or the Sentinel options. */
export function clientArguments(target: RedisTarget, options: RedisOptions): [string, RedisOptions] | [RedisOptions] {
  if (target.mode === 'cluster') throw new TypeError('a cluster is connected to with clusterArguments');
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
  if (target.mode === 'cluster') {
    const nodes = target.nodes.map((n) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(',');
    return `${target.tls ? 'rediss' : 'redis'}+cluster://${nodes}`;
  }
  if (target.mode === 'single') {
    const parsed = new URL(target.url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  }
  const sentinels = target.sentinels.map((s) => (s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`)).join(',');
  return `${target.tls ? 'rediss' : 'redis'}+sentinel://${sentinels}/${target.master}/${target.db}`;
}
