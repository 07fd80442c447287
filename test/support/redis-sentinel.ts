// A primary with replicas, and a Redis Sentinel group on loopback, as production runs one: a primary, replicas following it, and
// Sentinels watching it (a quorum of two), with a short down-after so a failover takes seconds.
// Debian's redis-server runs each (`--sentinel` for the Sentinels).
import { eventually } from './eventually.ts';
import { askRedis, startRedis, type RunningRedis } from './redis-server.ts';
import { CONVERGE_MS } from './patience.ts';

export const MASTER_NAME = 'tollgate';
/** How long a Sentinel waits before it holds the primary down (ms). */
export const DOWN_AFTER_MS = 1000;

export interface SentinelGroup {
  /** redis+sentinel://127.0.0.1:<port>,.../tollgate */
  readonly url: string;
  readonly sentinels: readonly RunningRedis[];
  /** Data nodes by port: the first primary and its replicas. */
  readonly nodes: ReadonlyMap<number, RunningRedis>;
  /** The port of the node the Sentinels name primary now. */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

export interface ReplicatedRedis {
  readonly primary: RunningRedis;
  readonly replicas: readonly RunningRedis[];
  stop(): Promise<void>;
}

/** A primary and `count` replicas following it, returned once every replica is in sync (a replica promoted before its first sync would be empty). */
export async function startReplicatedRedis(count: number): Promise<ReplicatedRedis> {
  // A full sync starts at once, rather than after the 5 s Redis waits for more replicas to join it.
  const sync = ['--repl-diskless-sync-delay', '0'];
  const primary = await startRedis({ args: sync });
  const replicas = await Promise.all(
    Array.from({ length: count }, () => startRedis({ args: [...sync, '--replicaof', '127.0.0.1', String(primary.port)] })),
  );
  await eventually(
    async () => (await askRedis(primary.port, (c) => c.info('replication'))).split('state=online').length - 1 === replicas.length,
    'the replicas in sync with the primary',
    { timeoutMs: CONVERGE_MS },
  );
  return { primary, replicas, stop: async () => void (await Promise.all([primary, ...replicas].map((node) => node.stop()))) };
}

export async function startSentinelGroup(options: { replicas?: number; sentinels?: number } = {}): Promise<SentinelGroup> {
  const { primary, replicas } = await startReplicatedRedis(options.replicas ?? 2);
  const config = [
    `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primary.port} 2`,
    `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${MASTER_NAME} 10000`,
    `sentinel parallel-syncs ${MASTER_NAME} 1`,
    '',
  ].join('\n');
  const sentinels = await Promise.all(Array.from({ length: options.sentinels ?? 3 }, () => startRedis({ sentinel: config })));
  const nodes = new Map([primary, ...replicas].map((node) => [node.port, node]));
  const group: SentinelGroup = {
    url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${MASTER_NAME}`,
    sentinels,
    nodes,
    async primaryPort() {
      const [, port] = await askRedis(
        sentinels[0]!.port,
        (c) => c.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME) as Promise<string[]>,
      );
      return Number(port);
    },
    async stop() {
      await Promise.all([...sentinels, ...nodes.values()].map((node) => node.stop()));
    },
  };
  // Ready once every Sentinel knows the others (a failover needs the quorum).
  await eventually(
    async () => {
      const counts = await Promise.all(
        sentinels.map(async (s) => {
          const info = await askRedis(s.port, (c) => c.call('SENTINEL', 'master', MASTER_NAME) as Promise<string[]>);
          return Number(info[info.indexOf('num-other-sentinels') + 1]);
        }),
      );
      return counts.every((n) => n === sentinels.length - 1);
    },
    'the Sentinels knowing each other',
    { timeoutMs: CONVERGE_MS },
  );
  return group;
}
