// A Redis Cluster is reached through a redis+cluster:// URL, whose client follows the slots from
// node to node (redis-target.ts). A cluster node reached through a plain redis:// URL would answer
// MOVED to a part of the writes only; the process refuses to start on one instead, saying why and
// what to write.
import type { Redis } from 'ioredis';

/** The Redis is a Redis Cluster node: the process must not start on it. */
export class RedisClusterRefusedError extends Error {
  override name = 'RedisClusterRefusedError';
  /** The message without its subject, for a caller that names the Redis. */
  readonly problem =
    'is a Redis Cluster node (cluster_enabled:1), named as one Redis: name the cluster with a redis+cluster://host:port[,host:port...] URL (docs/redis.md)';
  constructor() {
    super('');
    this.message = `Redis ${this.problem}`;
  }
}

/** Throws RedisClusterRefusedError when `client` is connected to a cluster node; a Redis that refuses INFO is taken as it is. */
export async function refuseCluster(client: Redis): Promise<void> {
  let info: string;
  try {
    info = await client.info('cluster');
  } catch {
    return;
  }
  if (/^cluster_enabled:1/m.test(info)) throw new RedisClusterRefusedError();
}
