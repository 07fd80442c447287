// Which Redis a process is on, as Prometheus metrics (docs/redis.md, "Seeing which Redis"): the
// mode and primary, each replica's lag and the bytes it has not acknowledged, and the failover
// loss bound's counts. Every process that opens the store registers them (the gateways, the
// router workers, the operator), read at scrape time from what the store last read in the
// background (redis-topology.ts): scraping makes no round trip to Redis.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ReplicaView, RedisTopologyView } from './redis-topology.ts';

/** Every replica: the primary's, or on a cluster every primary's. */
function replicasIn(view: RedisTopologyView): readonly ReplicaView[] {
  return view.shards ? view.shards.flatMap((shard) => shard.replicas) : (view.replicas ?? []);
}

/** Registers the Redis metrics on `registry`, read from `source` at each scrape (undefined: no Redis, or not open yet). */
export function registerRedisMetrics(registry: Registry, source: () => RedisTopologyView | undefined): void {
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (view: RedisTopologyView, set: (labels: Partial<Record<L, string>>, value: number) => void) => void,
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        const view = source();
        if (view !== undefined) fill(view, (labels, value) => this.set(labels, value));
      },
    });
  gauge(
    'tollgate_redis_info',
    'The Redis this process is on (value 1): its mode (single, sentinel or cluster) and the primary it is connected to (empty while disconnected).',
    ['mode', 'primary'],
    (view, set) => set({ mode: view.mode, primary: view.primary ?? '' }, 1),
  );
  gauge(
    'tollgate_redis_cluster_primary',
    'On a Redis Cluster: each primary (value 1) and the hash slot ranges it serves, as the cluster says (read every 5 s).',
    ['primary', 'slots'],
    (view, set) => {
      for (const shard of view.shards ?? []) set({ primary: shard.primary, slots: shard.slots.join(',') }, 1);
    },
  );
  gauge(
    'tollgate_redis_replica_lag_seconds',
    'Seconds since each replica of the primary (on a cluster, of each primary) last acknowledged its replication stream, as the primary reports it (INFO replication, read every 5 s).',
    ['replica', 'state'],
    (view, set) => {
      for (const replica of replicasIn(view)) set({ replica: replica.address, state: replica.state }, replica.lagSeconds);
    },
  );
  gauge(
    'tollgate_redis_replica_behind_bytes',
    "Bytes of the primary's replication stream each replica has not acknowledged yet: what a failover to it would lose.",
    ['replica'],
    (view, set) => {
      for (const replica of replicasIn(view)) set({ replica: replica.address }, replica.behindBytes);
    },
  );
  const unconfirmed = new Counter({
    name: 'tollgate_redis_writes_unconfirmed_total',
    help: 'With --redis-wait-replicas: tries of a write the replicas did not confirm in time (or Redis did not answer), by kind: admission (answered 503), settlement (sent again), change (answered 503).',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const counts = source()?.durability?.unconfirmed;
      unconfirmed.reset();
      if (counts) for (const [kind, n] of Object.entries(counts)) unconfirmed.inc({ kind }, n);
    },
  });
  gauge(
    'tollgate_redis_settlements_pending',
    'With --redis-wait-replicas: settlements the replicas have not confirmed yet, being sent again.',
    [],
    (view, set) => {
      if (view.durability) set({}, view.durability.pendingSettlements);
    },
  );
}
