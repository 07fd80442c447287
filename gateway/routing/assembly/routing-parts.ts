// Where a gateway's routing is composed, both modes, and nowhere else: the one provider-health
// model (breakers, verdicts, cool-downs) and the health checks that feed it, the local placer with
// the signals and scorers it chooses on, and, when the store has the routing queue (Redis), the
// process's queue client, the placer that sends queue-mode routers through it, the router
// workers it runs itself (--router-workers) and the queue metrics. Without the queue every router
// is placed locally. This folder sits above gateway/queue/ in the layers (.dependency-cruiser.cjs):
// it builds the queue's parts, which use routing's.
import type { AnswerTracing } from '../../queue/answer-trace.ts';
import { randomUUID } from 'node:crypto';
import type { Log } from '../../../core/log.ts';
import type { MemoryStore } from '../../../core/store/memory/memory-store.ts';
import type { RedisStore } from '../../../core/store/redis/redis-store.ts';
import type { GatewaySettings } from '../../config/settings.ts';
import type { GatewayMetrics } from '../../observability/metrics.ts';
import { EngineMetrics } from '../../observability/engine-metrics.ts';
import { QueueMetrics } from '../../observability/queue-metrics.ts';
import type { UpstreamHttp } from '../../providers/upstream-http.ts';
import { workerPassMetrics } from '../../queue/pass-metrics.ts';
import { QueueClient } from '../../queue/queue-client.ts';
import { QueuePlacer } from '../../queue/queue-placer.ts';
import { RouterWorker } from '../../queue/router-worker.ts';
import { WORKER_DEFAULTS } from '../../queue/worker-defaults.ts';
import type { BreakerPolicy } from '../circuit-breaker.ts';
import { type MetricsSource, NO_ENGINE_SIGNALS } from '../engine-signals.ts';
import { ScrapedMetricsSource } from '../engine/scraped-metrics-source.ts';
import { HealthChecks } from '../health-checks.ts';
import { LocalPlacer, type PlacementScorer } from '../placement.ts';
import { ProviderHealth } from '../provider-health.ts';
import { PrefixAffinity } from '../prefix/prefix-affinity.ts';
import { countPlaced, engineRoom } from '../engine/engine-room.ts';
import type { RouterRoute } from '../routing-table.ts';
import type { ServedRouting } from '../served-routing.ts';
import { LATENCY_PROBE_SHARE } from '../strategies.ts';
import { engineGauges } from './engine-gauges.ts';
import { probeEvents, providerHealthEvents, queueEvents } from './routing-events.ts';
import { liveState, type RoutingLive } from './routing-live.ts';

export interface RoutingParts {
  readonly settings: GatewaySettings;
  /** The upstream client: health checks probe through it. */
  readonly http: UpstreamHttp;
  readonly store: RedisStore | MemoryStore;
  readonly routing: ServedRouting;
  readonly metrics: GatewayMetrics;
  readonly log: Log;
  /** The router workers of this process trace their answers to traced requests. */
  readonly tracing?: AnswerTracing | undefined;
}

export interface Routing {
  /** Where each attempt goes: queue-mode routers through the queue, the others (and all without Redis) locally. */
  readonly placer: QueuePlacer;
  /** The one owner of the providers' breakers, health verdicts and cool-downs. */
  readonly health: ProviderHealth;
  /** The live state of routing, fleet-wide for queue-mode routers. */
  live(): Promise<RoutingLive>;
  /** Starts what runs in the background: following the fleet's provider health, the health checks, the in-process router workers. */
  start(): void;
  close(): Promise<void>;
}

/** The circuit breakers' policy, from the process settings. */
export function breakerPolicy(settings: GatewaySettings): BreakerPolicy {
  return {
    threshold: settings.failureThreshold,
    cooldownMs: settings.cooldownSeconds * 1000,
    windowMs: settings.breakerWindowSeconds * 1000,
    failureRate: settings.breakerFailureRate,
    minRequests: settings.breakerMinRequests,
    halfOpenProbes: settings.breakerHalfOpenProbes,
  };
}

export function routingParts({ settings, store, routing, metrics, log, http, tracing }: RoutingParts): Routing {
  const health = new ProviderHealth({
    policy: breakerPolicy(settings),
    now: Date.now,
    shared: store.providerHealth,
    events: providerHealthEvents(metrics, log),
  });
  // The choice among providers takes more signals here (docs/architecture.md, "Adding a routing
  // signal"): a source of the engines' own numbers (below), and scorers reading them (or the
  // request) that local placement applies before each router's strategy: engine room keeps
  // saturated vLLM replicas out while another has room (engine/engine-room.ts). The source is
  // made below; the scorer reads it when a request is placed.
  const engines = { signals: (target: string) => signals.signals(target), sent: (target: string) => signals.sent(target) };
  const scorers: readonly PlacementScorer[] = [engineRoom(engines)];
  const local = new LocalPlacer(Math.random, Date.now, health.policy, scorers, new PrefixAffinity(store.prefixIndex), countPlaced(engines));
  // Queue mode needs the queue, a capability only a shared store has.
  const queue = store.routingQueue;
  // Read at scrape time, once the placer exists: the mode is the placer's to say.
  const isQueued = (router: RouterRoute) => placer.modeOf(router) === 'queue';
  const queueMetrics = new QueueMetrics(metrics.registry, queue && { queue: queue.statistics, table: () => routing.table, isQueued });
  const client =
    queue &&
    new QueueClient(queue.gateways, {
      slotTtlMs: settings.queueSlotTtlSeconds * 1000,
      agingMs: settings.queueAgingSeconds * 1000,
      graceMs: WORKER_DEFAULTS.answerGraceMs,
      cooling: health.cooling,
      log,
    });
  const placer = new QueuePlacer(local, client, {
    defaults: {
      mode: settings.routingMode,
      whenRedisDown: settings.queueWhenRedisDown,
      maxWaitMs: settings.queueMaxWaitSeconds * 1000,
      maxWaiting: settings.queueMaxWaiting,
    },
    available: () => store.healthy,
    events: queueEvents(queueMetrics, log),
  });
  const workers: RouterWorker[] = [];
  for (let i = 0; queue && i < settings.routerWorkers; i++) {
    workers.push(
      new RouterWorker(queue.workers, queue.workers.reader(WORKER_DEFAULTS.blockMs), () => routing.table, {
        ...WORKER_DEFAULTS,
        consumer: `${client?.gatewayId ?? 'gateway'}-${i}`,
        probeShare: LATENCY_PROBE_SHARE,
        // Late binding weighs the readings the gateways' scrapes share, as fresh as the local placer's.
        engines:
          settings.engineScrapeIntervalMs === 0
            ? undefined
            : { freshMs: 3 * settings.engineScrapeIntervalMs, recheckMs: settings.engineScrapeIntervalMs },
        log,
        onPass: workerPassMetrics(queueMetrics),
        tracing,
      }),
    );
  }
  // Who this gateway is in the fleet-wide claims (health probes, engine scrapes).
  const gatewayId = client?.gatewayId ?? randomUUID();
  // vLLM's /metrics, scraped once for the fleet through the store (each gateway itself in memory).
  const signals: MetricsSource =
    settings.engineScrapeIntervalMs === 0
      ? NO_ENGINE_SIGNALS
      : new ScrapedMetricsSource({ store: store.engineSignals, owner: gatewayId, intervalMs: settings.engineScrapeIntervalMs });
  // Each replica's engine load and predicted prefix hits in /metrics, read at scrape time.
  new EngineMetrics(metrics.registry, () => engineGauges(routing.table, signals));
  const checks = new HealthChecks({
    table: () => routing.table,
    http,
    health,
    owner: gatewayId,
    events: probeEvents(metrics),
  });
  let stopFollowing = () => {};
  return {
    placer,
    health,
    live: () => liveState(routing, placer, queue?.statistics, signals),
    start() {
      for (const worker of workers) worker.start();
      stopFollowing = health.follow(() => routing.table);
      routing.onLoad((table) => {
        checks.follow(table);
        signals.follow(table);
      });
    },
    async close() {
      stopFollowing();
      checks.stop();
      signals.stop();
      await Promise.all(workers.map((worker) => worker.stop()));
      client?.close();
    },
  };
}
