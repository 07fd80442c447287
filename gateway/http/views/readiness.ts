// What GET /readyz answers: whether this gateway is ready, the routing snapshot it serves, and
// which Redis it is on (mode, primary, replicas, and the failover loss bound when on). The type
// of the health route's answers and the source of the Playground's Status page's (web/api.ts,
// type-only); zod alone is imported.
import { z } from 'zod';

const ReplicaView = z.strictObject({
  address: z.string(),
  /** online, wait_bgsave, send_bulk... as the primary says. */
  state: z.string(),
  lag_seconds: z.number(),
  behind_bytes: z.number(),
});

export const RedisView = z.strictObject({
  mode: z.enum(['single', 'sentinel', 'cluster']),
  /** host:port of the primary connected to; null while not connected. */
  primary: z.string().nullable(),
  /** Null until read, or where INFO is refused; null on a cluster (see shards). */
  replicas: z.array(ReplicaView).nullable(),
  /** On a Redis Cluster: each primary, the hash slot ranges it serves (`0-5460`) and its replicas; absent until read. */
  shards: z.array(z.strictObject({ primary: z.string(), slots: z.array(z.string()), replicas: z.array(ReplicaView) })).optional(),
  /** The failover loss bound (--redis-wait-replicas), when on. */
  durability: z
    .strictObject({
      wait_replicas: z.number(),
      unconfirmed: z.strictObject({ admission: z.number(), settlement: z.number(), change: z.number() }),
      pending_settlements: z.number(),
    })
    .optional(),
});
export type RedisView = z.output<typeof RedisView>;

export const ReadinessView = z.union([
  z.strictObject({
    status: z.literal('ready'),
    snapshot: z.string(),
    routers: z.number(),
    /** Failing open: served without the store, which does not answer. */
    store: z.literal('unavailable').optional(),
    redis: RedisView.optional(),
  }),
  z.strictObject({ status: z.literal('not ready'), reason: z.string(), redis: RedisView.optional() }),
]);
export type ReadinessView = z.output<typeof ReadinessView>;
