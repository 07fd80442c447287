// The live state of routing, as GET /v1/admin/routing shows it: each router's mode and queue,
// each provider's (each replica's) capacity, use, breaker and health, its engine's load as last
// read (with the saturation verdict local placement reaches on it) and, for prefix_affinity
// routers, the prefix-cache hits predicted for the requests placed on it. Fleet-wide for
// queue-mode routers (read from Redis when asked), this gateway's own for local ones; read only,
// never on a request's path.
import type { ProviderLive, QueueStatistics } from '../../../core/store/routing-queue.ts';
import type { QueuePlacer } from '../../queue/queue-placer.ts';
import type { BreakerState } from '../circuit-breaker.ts';
import type { EngineTarget, MetricsSource, SignalsFreshness } from '../engine-signals.ts';
import type { ServedRouting } from '../served-routing.ts';
import type { ProviderRoute } from '../routing-table.ts';
import { engineLoad } from '../engine/engine-room.ts';
import { saturationOf } from '../engine/engine-targets.ts';
import { maskUrl } from '../../providers/secrets.ts';

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
    /** One of the provider's several replicas (its address, secrets masked); null for a provider of one address. */
    readonly replica: string | null;
    readonly router: string;
    /** Most requests on it (on each replica of a provider with several). */
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
    /** Its engine replicas whose /metrics are read (engine-signals.ts), and what they last said. */
    readonly engines: EngineLive[];
    /** prefix_affinity routers: the prefix-cache hits predicted for the requests this gateway placed on it; null for other strategies. */
    readonly prefix: PrefixLive | null;
  }[];
}

/** What prefix affinity predicted, in prompt blocks (prefix/prompt-blocks.ts), since this gateway started. */
export interface PrefixLive {
  /** Of the prompt blocks of the requests placed on it, those it was predicted to hold. */
  readonly predicted_hit_blocks: number;
  readonly prompt_blocks: number;
  /** predicted_hit_blocks over prompt_blocks; null before any block. */
  readonly predicted_hit_ratio: number | null;
}

/** One engine replica in the routing view: its signals, or why routing does without them. */
export interface EngineLive {
  readonly target: string;
  readonly url: string;
  readonly signals: SignalsFreshness['state'];
  readonly signals_age_ms: number | null;
  readonly signals_reason: string | null;
  readonly waiting: number | null;
  readonly running: number | null;
  readonly kv_cache_usage: number | null;
  readonly sent_since_read: number | null;
  /** Whether local placement keeps it out while another has room (engine/engine-room.ts); null without fresh signals. */
  readonly saturated: boolean | null;
  /** The thresholds it is judged by: its provider's `saturation`, or the defaults. */
  readonly max_waiting: number;
  readonly max_kv_cache: number;
  /** The engine's own prefix-cache counters since it started: prompt tokens looked up, and found. */
  readonly prefix_cache_queries: number | null;
  readonly prefix_cache_hits: number | null;
}

/** The live state now; the fleet-wide numbers are null while Redis does not answer. */
export async function liveState(
  routing: ServedRouting,
  placer: Pick<QueuePlacer, 'modeOf'>,
  queue: QueueStatistics | undefined,
  engines: Pick<MetricsSource, 'targets' | 'signals' | 'staleness'>,
): Promise<RoutingLive> {
  const { routers } = routing.table;
  const queued = new Set(routers.filter((router) => placer.modeOf(router) === 'queue').map((router) => router.spec.name));
  const depths = new Map<string, number>();
  let fleet = new Map<string, ProviderLive>();
  if (queue && queued.size > 0) {
    try {
      for (const name of queued) depths.set(name, await queue.depth(name));
      const providers = routers
        .filter((router) => queued.has(router.spec.name))
        .flatMap((router) => router.providers.map((p) => ({ router: router.spec.name, id: p.key })));
      fleet = await queue.providers(providers, Date.now());
    } catch {
      // Redis does not answer: the fleet-wide numbers are null.
    }
  }
  const rounded = (value: number | undefined) => (value === undefined ? null : Math.round(value * 10) / 10);
  const targets = Map.groupBy(engines.targets(), (target) => target.providerId);
  /** The targets read for a provider's route: the one at its address. */
  const enginesAt = (spec: { id: string; url?: string }) => (targets.get(spec.id) ?? []).filter((target) => target.url === spec.url);
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
        const live = inQueue ? fleet.get(provider.key) : undefined;
        const now = Date.now();
        const coolingUntil = Math.max(inQueue ? (live?.coolingUntil ?? 0) : 0, here.breaker.openUntil);
        return {
          id: provider.spec.id,
          replica: provider.replica === undefined ? null : maskUrl(provider.replica),
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
          engines: enginesAt(provider.spec).map((target) => engineLive(target, provider, engines)),
          prefix: router.spec.load_balancing_strategy === 'prefix_affinity' ? prefixLive(provider) : null,
        };
      }),
    ),
  };
}

/** A replica's entry: its signals while fresh, the age and reason of the last reading in any case. */
function engineLive(target: EngineTarget, route: ProviderRoute, engines: Pick<MetricsSource, 'signals' | 'staleness'>): EngineLive {
  const freshness = engines.staleness(target.key);
  const signals = engines.signals(target.key);
  // An address may carry credentials or a key in its query: shown masked, as everywhere.
  const url = maskUrl(target.url);
  const load = engineLoad(route, engines);
  const limits = saturationOf(route);
  return {
    target: target.key.replace(target.url, url),
    url,
    signals: freshness.state,
    signals_age_ms: freshness.state === 'unknown' ? null : freshness.ageMs,
    signals_reason: freshness.state === 'failing' ? freshness.reason : null,
    waiting: signals?.waiting ?? null,
    running: signals?.running ?? null,
    kv_cache_usage: signals?.kvCacheUsage ?? null,
    sent_since_read: signals?.sentSinceRead ?? null,
    saturated: load === undefined ? null : load >= 1,
    max_waiting: limits.max_waiting,
    max_kv_cache: limits.max_kv_cache,
    prefix_cache_queries: signals?.prefixQueries ?? null,
    prefix_cache_hits: signals?.prefixHits ?? null,
  };
}

/** A replica's predicted prefix hits, from its state's counters. */
function prefixLive({ state }: ProviderRoute): PrefixLive {
  const blocks = state.prefixBlocks;
  return {
    predicted_hit_blocks: state.prefixHitBlocks,
    prompt_blocks: blocks,
    predicted_hit_ratio: blocks === 0 ? null : Math.round((state.prefixHitBlocks / blocks) * 1000) / 1000,
  };
}
