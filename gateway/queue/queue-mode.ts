// A gateway's routing, both modes: the placer every request goes through, the process's queue
// client when there is Redis, the router workers it runs itself (--router-workers), and the
// queue metrics. Without Redis every router is placed locally (queue mode needs the queues).
import type { Log } from '../../core/log.ts';
import type { MemoryStore } from '../../core/store/memory/memory-store.ts';
import type { RedisStore } from '../../core/store/redis/redis-store.ts';
import type { ProviderLive, QueueStatistics } from '../../core/store/routing-queue.ts';
import type { GatewaySettings } from '../config/settings.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { QueueMetrics } from '../observability/queue-metrics.ts';
import { LocalPlacer } from '../routing/placement.ts';
import { ProviderHealth, type ProviderHealthEvents } from '../routing/provider-health.ts';
import { HealthChecks, type HealthEvents } from '../routing/health-checks.ts';
import type { UpstreamHttp } from '../providers/upstream-http.ts';
import { randomUUID } from 'node:crypto';
import type { BreakerPolicy, BreakerState } from '../routing/circuit-breaker.ts';
import type { ServedRouting } from '../routing/served-routing.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import { LATENCY_PROBE_SHARE } from '../routing/strategies.ts';
import { QueueClient } from './queue-client.ts';
import { QueuePlacer } from './queue-placer.ts';
import { RouterWorker } from './router-worker.ts';
import { WORKER_DEFAULTS } from './worker-defaults.ts';

export interface RoutingParts {
  readonly settings: GatewaySettings;
  /** The upstream client: health checks probe through it. */
  readonly http: UpstreamHttp;
  readonly store: RedisStore | MemoryStore;
  readonly routing: ServedRouting;
  readonly metrics: GatewayMetrics;
  readonly log: Log;
}

/** What GET /v1/admin/routing shows: each router's mode and queue, each provider's capacity and use. */
export interface RoutingLive {
  readonly object: 'routing';
  readonly routers: {
    readonly name: string;
    readonly routing_mode: 'local' | 'queue';
    /** Queue mode: requests waiting fleet-wide; null in local mode or while Redis does not answer. */
    readonly queue_depth: number | null;
  }[];
  readonly providers: {
    readonly id: string;
    readonly router: string;
    readonly max_concurrent: number | null;
    /** Queue mode: slots held fleet-wide; local mode: this gateway's requests in flight. */
    readonly in_use: number | null;
    /** This gateway's requests in flight on it. */
    readonly in_flight_here: number;
    /** Until when it sits out (ISO time): its circuit breaker is open, or (queue mode) it cools down fleet-wide; null when it does not. */
    readonly cooling_until: string | null;
    /** Its circuit breaker: closed, open, or half_open (probe requests go). */
    readonly breaker: BreakerState;
    /** Why the breaker opened last, while it is not closed. */
    readonly breaker_reason: string | null;
    /** The health checks' verdict; null while the provider is not checked. */
    readonly healthy: boolean | null;
    /** Why the last probe failed, while it is unhealthy. */
    readonly health_reason: string | null;
    /** When the last verdict came (ISO time). */
    readonly checked_at: string | null;
    /** Moving average of the time to first token (ms), fleet-wide in queue mode. */
    readonly ttft_ms: number | null;
    readonly ttft_p95_ms: number | null;
    /** Moving average share of failed answers (0 to 1), queue mode. */
    readonly error_rate: number | null;
  }[];
}

export interface Routing {
  readonly placer: QueuePlacer;
  /** The one owner of the providers' breakers, health verdicts and cool-downs. */
  readonly health: ProviderHealth;
  /** The live state of routing, fleet-wide for queue-mode routers. */
  live(): Promise<RoutingLive>;
  /** Starts the in-process router workers, if any. */
  start(): void;
  close(): Promise<void>;
}

/** Breakers opening (counted) and closing, verdicts changing: said in the log. */
function providerHealthEvents(metrics: GatewayMetrics, log: Log): ProviderHealthEvents {
  return {
    opened(router, provider, until, error) {
      metrics.cooldowns.inc({ router: router.spec.name, provider: provider.spec.id });
      const seconds = Math.max(0, Math.round((until - Date.now()) / 1000));
      log.warn(
        { router: router.spec.name, provider: provider.spec.id },
        `circuit breaker open for ${seconds}s after failures: ${error.message}`,
      );
    },
    closed(router, provider) {
      log.info({ router: router.spec.name, provider: provider.spec.id }, 'circuit breaker closed: the provider answered a probe request');
    },
    judged(provider, healthy, reason) {
      const where = { router: provider.spec.router, provider: provider.spec.id };
      if (healthy) log.info(where, 'health checks pass: the provider takes requests');
      else log.warn(where, `provider taken out: ${reason}`);
    },
  };
}

/** Health probes: counted. */
function healthEvents(metrics: GatewayMetrics): HealthEvents {
  return {
    probed(provider, ok) {
      metrics.healthChecks.inc({ router: provider.spec.router, provider: provider.spec.id, result: ok ? 'ok' : 'failed' });
    },
  };
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

export function routingParts({ settings, store, routing, metrics, log, http }: RoutingParts): Routing {
  const policy = breakerPolicy(settings);
  const health = new ProviderHealth({ policy, now: Date.now, shared: store.providerHealth, events: providerHealthEvents(metrics, log) });
  const local = new LocalPlacer(Math.random, Date.now, policy);
  const defaults = {
    mode: settings.routingMode,
    whenRedisDown: settings.queueWhenRedisDown,
    maxWaitMs: settings.queueMaxWaitSeconds * 1000,
    maxWaiting: settings.queueMaxWaiting,
  };
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
  let fallbackWarned = 0;
  const placer = new QueuePlacer(local, client, {
    defaults,
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
      onRefused(router) {
        queueMetrics.rejections.inc({ router: router.spec.name, reason: 'unavailable' });
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
        new RouterWorker(queue.workers, queue.workers.reader(WORKER_DEFAULTS.blockMs), () => routing.table, {
          ...WORKER_DEFAULTS,
          consumer: `${client?.gatewayId ?? 'gateway'}-${i}`,
          probeShare: LATENCY_PROBE_SHARE,
          log,
          onPass: workerPassMetrics(queueMetrics),
        }),
      );
    }
  }
  const checks = new HealthChecks({
    table: () => routing.table,
    http,
    health,
    owner: client?.gatewayId ?? randomUUID(),
    events: healthEvents(metrics),
  });
  let stopFollowing = () => {};
  return {
    placer,
    health,
    live: () => liveState(routing, placer, queue?.statistics),
    start() {
      for (const worker of workers) worker.start();
      stopFollowing = health.follow(() => routing.table);
      routing.onLoad((table) => checks.follow(table));
    },
    async close() {
      stopFollowing();
      checks.stop();
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

async function liveState(routing: ServedRouting, placer: QueuePlacer, queue: QueueStatistics | undefined): Promise<RoutingLive> {
  const { routers } = routing.table;
  const queued = new Set(routers.filter((router) => placer.modeOf(router) === 'queue').map((router) => router.spec.name));
  const depths = new Map<string, number>();
  let fleet = new Map<string, ProviderLive>();
  if (queue && queued.size > 0) {
    try {
      for (const name of queued) depths.set(name, await queue.depth(name));
      const ids = routers.filter((router) => queued.has(router.spec.name)).flatMap((router) => router.providers.map((p) => p.spec.id));
      fleet = await queue.providers(ids, Date.now());
    } catch {
      // Redis does not answer: the fleet-wide numbers are null.
    }
  }
  const rounded = (value: number | undefined) => (value === undefined ? null : Math.round(value * 10) / 10);
  return {
    object: 'routing',
    routers: routers.map((router) => ({
      name: router.spec.name,
      routing_mode: queued.has(router.spec.name) ? 'queue' : 'local',
      queue_depth: depths.get(router.spec.name) ?? null,
    })),
    providers: routers.flatMap((router) =>
      router.providers.map((provider) => {
        const here = provider.state;
        const inQueue = queued.has(router.spec.name);
        const live = inQueue ? fleet.get(provider.spec.id) : undefined;
        const now = Date.now();
        const coolingUntil = Math.max(inQueue ? (live?.coolingUntil ?? 0) : 0, here.breaker.openUntil);
        return {
          id: provider.spec.id,
          router: router.spec.name,
          max_concurrent: provider.spec.max_concurrent ?? null,
          in_use: inQueue ? (live?.slotsInUse ?? null) : here.inFlight,
          in_flight_here: here.inFlight,
          cooling_until: coolingUntil > now ? new Date(coolingUntil).toISOString() : null,
          breaker: here.breaker.state(now),
          breaker_reason: here.breaker.reason,
          healthy: here.healthy ?? null,
          health_reason: here.healthReason,
          checked_at: here.checkedAt === null ? null : new Date(here.checkedAt).toISOString(),
          ttft_ms: inQueue ? rounded(live?.ttftMs) : here.measured > 0 ? rounded(here.ttftMs) : null,
          ttft_p95_ms: inQueue ? rounded(live?.ttftP95Ms) : null,
          error_rate: inQueue && live?.errorRate !== undefined ? Math.round(live.errorRate * 1000) / 1000 : null,
        };
      }),
    ),
  };
}
