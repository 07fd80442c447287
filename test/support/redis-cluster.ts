// A Redis Cluster on loopback, as production runs one: primaries sharing the 16,384 hash slots,
// each with replicas, made by `redis-cli --cluster create` from Debian's redis-server processes
// (`--cluster-enabled yes`), with a short node timeout so that a failover takes seconds.
import { execFile } from 'node:child_process';
import { after, before } from 'node:test';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { eventually } from './eventually.ts';
import { askRedis, startRedis, startRedisServers, type RunningRedis } from './redis-server.ts';
import { CONVERGE_MS } from './patience.ts';

const run = promisify(execFile);

/** How long a node may not answer before the others hold it failing (ms). */
export const NODE_TIMEOUT_MS = 1000;

export interface RedisCluster {
  /** redis+cluster://127.0.0.1:<port>,... (every node: the clients learn the slots from any). */
  readonly url: string;
  /** Every node, by port. */
  readonly nodes: ReadonlyMap<number, RunningRedis>;
  /** The ports of the nodes that are primaries now, each with the slot ranges it serves. */
  primaries(): Promise<{ port: number; slots: [number, number][] }[]>;
  /** The node that is the primary of `key`'s hash slot now, and its replicas. */
  shardOf(key: string): Promise<{ primary: RunningRedis; replicas: RunningRedis[] }>;
  stop(): Promise<void>;
}

/** `primaries` primaries with `replicas` replicas each, returned once every node says the cluster is ok and every replica is in sync. */
export async function startRedisCluster(options: { primaries?: number; replicas?: number } = {}): Promise<RedisCluster> {
  const primaries = options.primaries ?? 3;
  const replicas = options.replicas ?? 1;
  const args = ['--cluster-enabled', 'yes', '--cluster-node-timeout', String(NODE_TIMEOUT_MS), '--repl-diskless-sync-delay', '0'];
  const started = await startRedisServers(primaries * (1 + replicas), () => startRedis({ args, clusterBus: true }));
  const nodes = new Map(started.map((node) => [node.port, node]));
  const addresses = started.map((node) => `127.0.0.1:${node.port}`);
  try {
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: CONVERGE_MS,
    });
    await eventually(
      async () => {
        const states = await Promise.all(started.map((node) => askRedis(node.port, (c) => c.call('CLUSTER', 'INFO') as Promise<string>)));
        return states.every(
          (info) => /^cluster_state:ok/m.test(info) && /^cluster_known_nodes:(\d+)/m.exec(info)?.[1] === String(started.length),
        );
      },
      'every node of the cluster ok',
      { timeoutMs: CONVERGE_MS },
    );
    const cluster: RedisCluster = {
      url: `redis+cluster://${addresses.join(',')}`,
      nodes,
      async primaries() {
        const shards = (await askAnyNode(started, (c) => c.call('CLUSTER', 'SLOTS'))) as [number, number, [string, number, string]][];
        const byPort = new Map<number, [number, number][]>();
        for (const [from, to, [, port]] of shards) byPort.set(port, [...(byPort.get(port) ?? []), [from, to]]);
        return [...byPort].map(([port, slots]) => ({ port, slots }));
      },
      async shardOf(key) {
        const slot = calculateSlot(key);
        const found = (await cluster.primaries()).find(({ slots }) => slots.some(([from, to]) => slot >= from && slot <= to));
        if (!found) throw new Error(`no primary serves slot ${slot}`);
        const info = await askRedis(found.port, (c) => c.info('replication'));
        const ports = [...info.matchAll(/^slave\d+:.*port=(\d+)/gm)].map((m) => Number(m[1]));
        return { primary: nodes.get(found.port)!, replicas: ports.map((port) => nodes.get(port)!) };
      },
      async stop() {
        await Promise.all(started.map((node) => node.stop()));
      },
    };
    // A replica promoted before its first sync would be empty.
    await eventually(
      async () => {
        const infos = await Promise.all((await cluster.primaries()).map(({ port }) => askRedis(port, (c) => c.info('replication'))));
        return infos.every((info) => info.split('state=online').length - 1 === replicas);
      },
      'every replica in sync with its primary',
      { timeoutMs: CONVERGE_MS },
    );
    return cluster;
  } catch (error) {
    await Promise.all(started.map((node) => node.stop()));
    throw error;
  }
}

/** The file's cluster: started before its first test, stopped after its last (as useRedis does for one Redis). */
export interface ClusterHandle {
  readonly cluster: RedisCluster;
  /** The file's own cluster client (commands go to the node of their key's slot), closed after the file's tests. */
  readonly admin: Cluster;
  /** Empties every primary (FLUSHALL), as a store factory does before each store it makes. */
  empty(): Promise<void>;
  /** Starts the cluster if it is not started yet: node:test runs a file's top-level before() hooks together, so one of the file's own awaits this first. */
  ready(): Promise<void>;
}

/** Declares the file's cluster; call at the top level of a test file (it registers its hooks). */
export function useRedisCluster(options: { primaries?: number; replicas?: number } = {}): ClusterHandle {
  let started: RedisCluster | undefined;
  let client: Cluster | undefined;
  let starting: Promise<void> | undefined;
  const ready = (): Promise<void> =>
    (starting ??= startRedisCluster(options).then((cluster) => {
      started = cluster;
    }));
  before(ready);
  after(async () => {
    client?.disconnect();
    await started?.stop();
  });
  const running = (): RedisCluster => {
    if (!started) throw new Error("the file's cluster is not started");
    return started;
  };
  return {
    get cluster() {
      return running();
    },
    get admin() {
      client ??= new Cluster([...running().nodes.keys()].map((port) => ({ host: '127.0.0.1', port })));
      return client;
    },
    ready,
    async empty() {
      const primaries = await running().primaries();
      await Promise.all(primaries.map(({ port }) => askRedis(port, (c) => c.flushall())));
    },
  };
}

/** Asks the first node that answers (one may have been killed). */
async function askAnyNode<T>(nodes: readonly RunningRedis[], command: Parameters<typeof askRedis<T>>[1]): Promise<T> {
  let last: unknown;
  for (const node of nodes) {
    try {
      return await askRedis(node.port, command);
    } catch (error) {
      last = error;
    }
  }
  throw last;
}
