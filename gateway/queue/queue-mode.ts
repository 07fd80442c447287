// A gateway's routing, both modes: the placer every request goes through, the process's queue
// client when there is Redis, the router workers it runs itself (--router-workers), and the
// queue metrics. Without Redis every router is placed locally (queue mode needs the queues).
import type { Log } from '../../core/log.ts';
import type { MemoryStore } from '../../core/store/memory/memory-store.ts';
import type { RedisStore } from '../../core/store/redis/redis-store.ts';
import type { GatewaySettings } from '../config/settings.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { QueueMetrics } from '../observability/queue-metrics.ts';
import { LocalPlacer } from '../routing/placement.ts';
import type { ServedRouting } from '../routing/served-routing.ts';
import { LATENCY_PROBE_SHARE } from '../routing/strategies.ts';
import { QueueClient } from './queue-client.ts';
import { QueuePlacer } from './queue-placer.ts';
import { RouterWorker } from './router-worker.ts';
import { WORKER_DEFAULTS } from './worker-defaults.ts';

export interface RoutingParts {
  readonly settings: GatewaySettings;
  readonly store: RedisStore | MemoryStore;
  readonly routing: ServedRouting;
  readonly metrics: GatewayMetrics;
  readonly log: Log;
}

export interface Routing {
  readonly placer: QueuePlacer;
  /** Starts the in-process router workers, if any. */
  start(): void;
  close(): Promise<void>;
}

export function routingParts({ settings, store, routing, metrics, log }: RoutingParts): Routing {
  const local = new LocalPlacer(Math.random, Date.now);
  const failure = { threshold: settings.failureThreshold, cooldownMs: settings.cooldownSeconds * 1000 };
  const defaults = {
    mode: settings.routingMode,
    whenRedisDown: settings.queueWhenRedisDown,
    maxWaitMs: settings.queueMaxWaitSeconds * 1000,
    maxWaiting: settings.queueMaxWaiting,
  };
  const queue = 'routingQueue' in store ? store.routingQueue : undefined;
  const isQueued = (router: { spec: { routing_mode?: 'local' | 'queue' | undefined } }) =>
    (router.spec.routing_mode ?? settings.routingMode) === 'queue';
  const queueMetrics = new QueueMetrics(metrics.registry, queue && { queue, table: () => routing.table, isQueued });
  const client =
    queue &&
    new QueueClient(queue, {
      slotTtlMs: settings.queueSlotTtlSeconds * 1000,
      agingMs: settings.queueAgingSeconds * 1000,
      graceMs: WORKER_DEFAULTS.answerGraceMs,
      log,
    });
  let fallbackWarned = 0;
  const placer = new QueuePlacer(local, client, {
    defaults,
    failure,
    available: () => store.healthy,
    events: {
      onFallback(router) {
        queueMetrics.fallbacks.inc({ router: router.spec.name });
        // One line a minute at most: every request of an outage would otherwise log.
        const now = Date.now();
        if (now - fallbackWarned > 60_000) {
          fallbackWarned = now;
          log.warn({ router: router.spec.name }, 'queue mode: Redis does not answer, routing in the gateway until it does');
        }
      },
      onAnswer(router, answer, waitedMs) {
        const name = router.spec.name;
        queueMetrics.waitSeconds.observe({ router: name }, waitedMs / 1000);
        if (answer.status === 'ok') queueMetrics.assignments.inc({ router: name, provider: answer.provider });
        else if (answer.status === 'busy' || answer.status === 'none') queueMetrics.rejections.inc({ router: name, reason: answer.status });
      },
    },
  });
  const workers: RouterWorker[] = [];
  if (queue && settings.routerWorkers > 0) {
    for (let i = 0; i < settings.routerWorkers; i++) {
      workers.push(
        new RouterWorker(queue, (store as RedisStore).blockingConnection(WORKER_DEFAULTS.blockMs), () => routing.table, {
          ...WORKER_DEFAULTS,
          consumer: `${client?.gatewayId ?? 'gateway'}-${i}`,
          probeShare: LATENCY_PROBE_SHARE,
          log,
          onPass: workerPassMetrics(queueMetrics),
        }),
      );
    }
  }
  return {
    placer,
    start() {
      for (const worker of workers) worker.start();
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.stop()));
      client?.close();
    },
  };
}

/** What a worker's pass adds to the metrics. */
export function workerPassMetrics(metrics: QueueMetrics) {
  return (router: string, pass: { given: number }, claimed: number) => {
    metrics.passes.inc({ router });
    if (pass.given > 0) metrics.workerAssigned.inc({ router }, pass.given);
    if (claimed > 0) metrics.claims.inc({ router }, claimed);
  };
}
