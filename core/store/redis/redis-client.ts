// The client every part of the Redis store talks through: one Redis (a single address, or the
// primary Sentinel names), or a Redis Cluster, whose keys are spread over 16,384 hash slots held by
// several primaries. The commands are the same; what differs is what crosses slots, said here once:
// a scan runs on every primary, and several keys are read or deleted slot by slot.
import calculateSlot from 'cluster-key-slot';
import type { ChainableCommander, Cluster, Redis, RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** Keys SCAN asks a node for at each step. */
const SCAN_COUNT = 1000;

/** The client's nodes that hold data to scan: the primaries of a cluster, else the one Redis. */
function scannedNodes(client: RedisClient): Redis[] {
  return client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
}

/**
 * Every key matching `pattern`, a page at a time (the next is asked for when the caller takes
 * it): on a cluster, every primary's in turn. A key may come twice (SCAN's promise); pages may be
 * empty.
 */
export async function* scanPages(client: RedisClient, pattern: string): AsyncGenerator<string[]> {
  for (const node of scannedNodes(client)) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      cursor = next;
      yield found;
    } while (cursor !== '0');
  }
}

/** Whether any key matches `pattern`: one SCAN page after another until one is found or none are left. */
export async function anyKey(client: RedisClient, pattern: string): Promise<boolean> {
  for await (const page of scanPages(client, pattern)) if (page.length > 0) return true;
  return false;
}

/** Every key matching `pattern`, once each. */
export async function scanAll(client: RedisClient, pattern: string): Promise<string[]> {
  const found = new Set<string>();
  for await (const page of scanPages(client, pattern)) for (const key of page) found.add(key);
  return [...found];
}

/** Has a cluster learn again which primary serves which slots (after a failover, before a command would make it). */
export function relearnSlots(cluster: Cluster): Promise<void> {
  return new Promise((resolve) => cluster.refreshSlotsCache(() => resolve()));
}

/** The hash slot of a key (its hash tag's, when it has one). */
export const slotOf = (key: string): number => calculateSlot(key);

/** Items grouped by the slot of their key, in their order. */
export function bySlot<T>(items: readonly T[], keyOf: (item: T) => string): T[][] {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const slot = slotOf(keyOf(item));
    const group = groups.get(slot);
    if (group) group.push(item);
    else groups.set(slot, [item]);
  }
  return [...groups.values()];
}

/**
 * Runs one command per item and returns the replies in order, as a pipeline's `exec()` would (an
 * error stays in its place): one pipeline on a single Redis; on a cluster, one per slot, as a
 * cluster's pipeline must keep to one slot.
 */
export async function pipelined<T>(
  client: RedisClient,
  items: readonly T[],
  keyOf: (item: T) => string,
  queue: (pipeline: ChainableCommander, item: T) => void,
): Promise<[Error | null, unknown][]> {
  if (items.length === 0) return [];
  const groups = client.isCluster
    ? bySlot(
        items.map((item, at) => ({ item, at })),
        ({ item }) => keyOf(item),
      )
    : [items.map((item, at) => ({ item, at }))];
  const replies: [Error | null, unknown][] = new Array(items.length);
  await Promise.all(
    groups.map(async (group) => {
      const pipeline = client.pipeline();
      for (const { item } of group) queue(pipeline, item);
      const results = (await pipeline.exec()) ?? [];
      for (const [i, { at }] of group.entries()) replies[at] = results[i] ?? [new Error('no reply'), null];
    }),
  );
  return replies;
}

/** Deletes the keys: in one command on a single Redis, one a slot on a cluster. Resolves with how many there were. */
export async function deleteKeys(client: RedisClient, keys: readonly string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const groups = client.isCluster ? bySlot(keys, (key) => key) : [[...keys]];
  const counts = await Promise.all(groups.map((group) => client.del(...group)));
  return counts.reduce((sum, n) => sum + n, 0);
}

/**
 * Another connection like `client`, with `options` over its own: a single Redis' or a cluster's
 * (each node's connection takes them; `enableOfflineQueue` is the cluster's own).
 */
export function duplicateClient(client: RedisClient, options: RedisOptions = {}): RedisClient {
  if (!client.isCluster) return (client as Redis).duplicate(options);
  const cluster = client as Cluster;
  const { enableOfflineQueue, ...perNode } = options;
  return cluster.duplicate(undefined, {
    redisOptions: { ...cluster.options.redisOptions, ...perNode },
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
  });
}
