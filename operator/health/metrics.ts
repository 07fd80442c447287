// Prometheus metrics of the operator, on a registry of their own (no global state, so tests can
// run several operators in one process). Leadership is read at scrape time, so the gauge can
// never disagree with the elector.
import { registerRedisMetrics } from '../../core/store/redis/redis-metrics.ts';
import type { RedisTopologyView } from '../../core/store/redis/redis-topology.ts';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What a reconcile was about: the one routing key, or one GatewayUser. */
export type ReconcileKind = 'routing' | 'user' | 'team';

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface OperatorMetricsOptions {
  /** Whether this replica leads now; read at scrape time. */
  readonly isLeader: () => boolean;
  /** Process metrics (CPU, memory, event loop lag...). Default true. */
  readonly processMetrics?: boolean;
}

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'kind' | 'result'>;
  readonly reconcileDuration: Histogram<'kind'>;
  readonly snapshotWrites: Counter;
  /** Which Redis (redis-topology.ts), once the store is open. */
  #redis: () => RedisTopologyView | undefined = () => undefined;

  constructor(options: OperatorMetricsOptions) {
    const registers = [this.registry];
    new Gauge({
      name: 'tollgate_operator_leader',
      help: '1 while this replica holds the leader-election Lease (and so reconciles), else 0.',
      registers,
      collect() {
        this.set(options.isLeader() ? 1 : 0);
      },
    });
    this.reconciles = new Counter({
      name: 'tollgate_operator_reconciles_total',
      help: 'Reconciles run by this replica, by kind (routing, user) and result (ok, error).',
      labelNames: ['kind', 'result'] as const,
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'tollgate_operator_reconcile_duration_seconds',
      help: 'Time one reconcile took, failed ones included, by kind.',
      labelNames: ['kind'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.snapshotWrites = new Counter({
      name: 'tollgate_operator_snapshot_writes_total',
      help: 'Writes of the routing ConfigMap (only made when the snapshot changed).',
      registers,
    });
    registerRedisMetrics(this.registry, () => this.#redis());
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'tollgate_operator_' });
  }

  /** Reads which Redis from `source` at each scrape (the store, once open). */
  trackRedis(source: () => RedisTopologyView): void {
    this.#redis = source;
  }

  /** Runs one reconcile, counting it by its outcome and timing it; its result or error passes through. */
  async reconcile(kind: ReconcileKind, run: () => Promise<void>): Promise<void> {
    const stop = this.reconcileDuration.startTimer({ kind });
    try {
      await run();
      this.reconciles.inc({ kind, result: 'ok' });
    } catch (error) {
      this.reconciles.inc({ kind, result: 'error' });
      throw error;
    } finally {
      stop();
    }
  }
}
