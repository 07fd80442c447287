// Which Redis the process is on, for /readyz and /metrics (docs/redis.md): the mode, the primary
// it is connected to (after a Sentinel failover, the promoted one), and its replicas as the
// primary reports them (INFO replication: each one's state, seconds since it last acknowledged,
// and how many bytes of the primary's stream it has not yet acknowledged: what a failover to it
// would lose). On a Redis Cluster: every primary, the hash slots it serves and its replicas.
// Read in the background every few seconds, never on a request's path.
import type { Socket } from 'node:net';
import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './redis-client.ts';
import type { RedisTarget } from './redis-target.ts';
import type { DurabilityView } from './redis-durability.ts';

export interface ReplicaView {
  /** host:port as the primary knows it. */
  readonly address: string;
  /** online, wait_bgsave, send_bulk... */
  readonly state: string;
  /** Seconds since the replica last acknowledged. */
  readonly lagSeconds: number;
  /** Bytes of the primary's replication stream the replica has not acknowledged yet. */
  readonly behindBytes: number;
}

/** A primary of a Redis Cluster: its address, the slot ranges it serves, its replicas. */
export interface ShardView {
  readonly primary: string;
  /** Ranges as `from-to` (a single slot as itself), ascending. */
  readonly slots: readonly string[];
  readonly replicas: readonly ReplicaView[];
}

export interface RedisTopologyView {
  readonly mode: RedisTarget['mode'];
  /** host:port of the primary this process is connected to; undefined while disconnected. */
  readonly primary: string | undefined;
  /** Undefined until read (or where INFO is not allowed). */
  readonly replicas: readonly ReplicaView[] | undefined;
  /** On a cluster: every primary, undefined until read (primary and replicas are then undefined). */
  readonly shards?: readonly ShardView[];
  /** The failover loss bound, when on (redis-durability.ts). */
  readonly durability?: DurabilityView;
}

/**
 * What /readyz says of Redis, in the API's snake_case: the gateways' (its schema is
 * gateway/http/views/readiness.ts RedisView), the router workers' and the operator's.
 */
export function readinessDetail(view: RedisTopologyView) {
  return {
    mode: view.mode,
    primary: view.primary ?? null,
    replicas: view.replicas?.map(replicaDetail) ?? null,
    ...(view.shards && {
      shards: view.shards.map((shard) => ({
        primary: shard.primary,
        slots: [...shard.slots],
        replicas: shard.replicas.map(replicaDetail),
      })),
    }),
    ...(view.durability && {
      durability: {
        wait_replicas: view.durability.waitReplicas,
        unconfirmed: view.durability.unconfirmed,
        pending_settlements: view.durability.pendingSettlements,
      },
    }),
  };
}

function replicaDetail(r: ReplicaView) {
  return { address: r.address, state: r.state, lag_seconds: r.lagSeconds, behind_bytes: r.behindBytes };
}

/** INFO replication's replicas, as `slave0:ip=...,port=...,state=online,offset=...,lag=0`, and the primary's offset. */
export function replicasOf(info: string): ReplicaView[] {
  const offset = Number(/^master_repl_offset:(\d+)/m.exec(info)?.[1] ?? 0);
  const replicas: ReplicaView[] = [];
  for (const match of info.matchAll(/^slave\d+:(.+)$/gm)) {
    const fields = Object.fromEntries(
      match[1]!
        .trim()
        .split(',')
        .map((pair) => pair.split('=') as [string, string]),
    );
    replicas.push({
      address: `${fields.ip}:${fields.port}`,
      state: fields.state ?? 'unknown',
      lagSeconds: Number(fields.lag ?? 0),
      behindBytes: Math.max(0, offset - Number(fields.offset ?? 0)),
    });
  }
  return replicas;
}

export class RedisTopology {
  readonly #client: RedisClient;
  readonly #mode: RedisTarget['mode'];
  readonly #timer: NodeJS.Timeout;
  #replicas: ReplicaView[] | undefined;
  #shards: ShardView[] | undefined;
  #reading = false;

  constructor(client: RedisClient, mode: RedisTarget['mode'], intervalMs: number) {
    this.#client = client;
    this.#mode = mode;
    this.#timer = setInterval(() => this.read(), intervalMs).unref();
    client.on('ready', () => this.read());
  }

  get view(): RedisTopologyView {
    if (this.#client.isCluster)
      return { mode: this.#mode, primary: undefined, replicas: undefined, ...(this.#shards && { shards: this.#shards }) };
    const stream = (this.#client as unknown as { stream?: Socket }).stream;
    const connected = this.#client.status === 'ready' && stream?.remoteAddress !== undefined;
    return {
      mode: this.#mode,
      primary: connected ? `${stream!.remoteAddress}:${stream!.remotePort}` : undefined,
      replicas: this.#replicas,
    };
  }

  read(): void {
    if (this.#reading || this.#client.status !== 'ready') return;
    this.#reading = true;
    if (this.#client.isCluster) {
      readShards(this.#client as Cluster)
        .then(
          (shards) => {
            this.#shards = shards;
          },
          () => {},
        )
        .finally(() => {
          this.#reading = false;
        });
      return;
    }
    (this.#client as Redis)
      .info('replication')
      .then(
        (info) => {
          this.#replicas = replicasOf(info);
        },
        // Not readable (a managed Redis that refuses INFO, or Redis away): what was read stays.
        () => {},
      )
      .finally(() => {
        this.#reading = false;
      });
  }

  close(): void {
    clearInterval(this.#timer);
  }
}

/** A cluster's primaries (CLUSTER SLOTS, asked of one), each with its slot ranges and replicas (its INFO replication). */
async function readShards(cluster: Cluster): Promise<ShardView[]> {
  const [first] = cluster.nodes('master');
  if (first === undefined) return [];
  const reply = (await first.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
  const ranges = new Map<string, [number, number][]>();
  for (const [from, to, [host, port]] of reply) {
    const address = `${host}:${port}`;
    ranges.set(address, [...(ranges.get(address) ?? []), [from, to]]);
  }
  const byAddress = new Map(cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const shards = await Promise.all(
    [...ranges].map(async ([primary, slots]) => {
      const node = byAddress.get(primary);
      const info = node ? await node.info('replication').catch(() => '') : '';
      return {
        primary,
        slots: slots.sort((a, b) => a[0] - b[0]).map(([from, to]) => (from === to ? String(from) : `${from}-${to}`)),
        replicas: replicasOf(info),
      };
    }),
  );
  return shards.sort((a, b) => a.primary.localeCompare(b.primary));
}
