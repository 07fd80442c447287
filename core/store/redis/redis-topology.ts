// Which Redis the process is on, for /readyz and /metrics (docs/redis.md): the mode, the primary
// it is connected to (after a Sentinel failover, the promoted one), and its replicas as the
// primary reports them (INFO replication: each one's state, seconds since it last acknowledged,
// and how many bytes of the primary's stream it has not yet acknowledged: what a failover to it
// would lose). Read in the background every few seconds, never on a request's path.
import type { Socket } from 'node:net';
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

export interface RedisTopologyView {
  readonly mode: RedisTarget['mode'];
  /** host:port of the primary this process is connected to; undefined while disconnected. */
  readonly primary: string | undefined;
  /** Undefined until read (or where INFO is not allowed). */
  readonly replicas: readonly ReplicaView[] | undefined;
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
    replicas:
      view.replicas?.map((r) => ({ address: r.address, state: r.state, lag_seconds: r.lagSeconds, behind_bytes: r.behindBytes })) ?? null,
    ...(view.durability && {
      durability: {
        wait_replicas: view.durability.waitReplicas,
        unconfirmed: view.durability.unconfirmed,
        pending_settlements: view.durability.pendingSettlements,
      },
    }),
  };
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
  #reading = false;

  constructor(client: RedisClient, mode: RedisTarget['mode'], intervalMs: number) {
    this.#client = client;
    this.#mode = mode;
    this.#timer = setInterval(() => this.read(), intervalMs).unref();
    client.on('ready', () => this.read());
  }

  get view(): RedisTopologyView {
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
    this.#client
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
