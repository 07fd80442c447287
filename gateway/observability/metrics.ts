// Prometheus metrics of the data plane, on a registry of their own (no global state). Those
// updated on every request are Series metrics (series-metrics.ts): plain arithmetic per update.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series-metrics.ts';
import type { RedisTopologyView } from '../../core/store/redis/redis-topology.ts';
import { registerRedisMetrics } from '../../core/store/redis/redis-metrics.ts';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

/** What the per-provider gauges read of each provider at scrape time. */
export interface ProviderGauges {
  readonly router: string;
  readonly provider: string;
  /** One of the provider's several replicas (its address, secrets masked); undefined for a provider of one. */
  readonly replica: string | undefined;
  readonly inFlight: number;
  readonly breaker: 'closed' | 'half_open' | 'open';
  readonly healthy: boolean | undefined;
}

/** A budget's standing, for tollgate_budget_used_ratio. */
export interface BudgetUse {
  readonly level: string;
  readonly id: string;
  readonly ratio: number;
}

export interface StoreReach {
  readonly store: 'memory' | 'redis';
  readonly healthy: boolean;
}

const BREAKER_VALUES = { closed: 0, half_open: 1, open: 2 } as const;

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new SeriesCounter({
    name: 'tollgate_requests_total',
    help: 'Inference requests answered, by router, provider, endpoint, the API the caller spoke and HTTP status.',
    labelNames: ['router', 'provider', 'endpoint', 'api', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new SeriesHistogram({
    name: 'tollgate_request_duration_seconds',
    help: 'Total time to answer an inference request, streaming included.',
    labelNames: ['router', 'endpoint'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly timeToFirstToken = new SeriesHistogram({
    name: 'tollgate_time_to_first_token_seconds',
    help: "Streamed answers: time from the request's arrival to its first token, by router.",
    labelNames: ['router'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamDuration = new SeriesHistogram({
    name: 'tollgate_upstream_duration_seconds',
    help: 'Time spent waiting on the provider for the successful attempt.',
    labelNames: ['router', 'provider'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly overhead = new SeriesHistogram({
    name: 'tollgate_overhead_seconds',
    help: "The gateway's own time on a request: total time less the time spent on the provider.",
    labelNames: ['endpoint'] as const,
    buckets: OVERHEAD_BUCKETS,
    registers: [this.registry],
  });
  readonly tokens = new SeriesCounter({
    name: 'tollgate_tokens_total',
    help: 'Tokens processed, by router, provider and kind (prompt or completion).',
    labelNames: ['router', 'provider', 'kind'] as const,
    registers: [this.registry],
  });
  readonly cachedTokens = new SeriesCounter({
    name: 'tollgate_cached_tokens_total',
    help: "Of the prompt tokens, those the backend reported read from its prompt cache (kind read: OpenAI's and vLLM's cached_tokens, Anthropic's cache reads) or written to it (kind write: Anthropic's cache writes), by router and provider.",
    labelNames: ['router', 'provider', 'kind'] as const,
    registers: [this.registry],
  });
  readonly cost = new SeriesCounter({
    name: 'tollgate_cost_total',
    help: 'Cost charged, in the money of router prices.',
    labelNames: ['router'] as const,
    registers: [this.registry],
  });
  readonly teamTokens = new SeriesCounter({
    name: 'tollgate_team_tokens_total',
    help: "Tokens of the requests of each team's members, by kind (prompt or completion); users of no team are not counted here.",
    labelNames: ['team', 'kind'] as const,
    registers: [this.registry],
  });
  readonly teamCost = new SeriesCounter({
    name: 'tollgate_team_cost_total',
    help: "Cost of the requests of each team's members, in the money of router prices; users of no team are not counted here.",
    labelNames: ['team'] as const,
    registers: [this.registry],
  });
  readonly uncoveredCost = new Counter({
    name: 'tollgate_uncovered_cost_total',
    help: 'Cost that budgets had no room left for (the request cost more than its hold), in the money of router prices: recorded, not charged.',
    labelNames: ['router'] as const,
    registers: [this.registry],
  });
  readonly uncoveredRequests = new Counter({
    name: 'tollgate_uncovered_requests_total',
    help: 'Requests whose cost their budget had no room left for, in whole or in part.',
    labelNames: ['router'] as const,
    registers: [this.registry],
  });
  readonly usageAnomalies = new Counter({
    name: 'tollgate_usage_anomalies_total',
    help: "Answers whose token usage was not believed (not a non-negative integer, or more than the request allows) and was replaced by a bound or the gateway's count, by kind.",
    labelNames: ['router', 'provider', 'kind'] as const,
    registers: [this.registry],
  });
  readonly audioScans = new Counter({
    name: 'tollgate_audio_scans_total',
    help: "Uploaded audio files whose duration was to be read, by outcome: read, not_read (not recognised), timed_out, lost (the scan thread died), caller_limit (the user's scans at --audio-scans-per-caller: 429), queue_wait (no scan thread came free in time: 503).",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /** Read at scrape time from the providers' own state, so the hot path pays nothing. */
  #providerSource: () => Iterable<ProviderGauges> = () => [];
  readonly inFlight = this.#providerGauge('tollgate_provider_in_flight_requests', 'Requests in flight per provider.', (p) => p.inFlight);
  readonly breakerState = this.#providerGauge(
    'tollgate_provider_breaker_state',
    "The provider's circuit breaker in this gateway: 0 closed, 1 half-open (probe requests go), 2 open (no requests).",
    (p) => BREAKER_VALUES[p.breaker],
  );
  readonly healthy = this.#providerGauge(
    'tollgate_provider_healthy',
    "The active health checks' verdict on the provider: 1 healthy, 0 unhealthy (absent while it is not checked).",
    (p) => (p.healthy === undefined ? undefined : p.healthy ? 1 : 0),
  );
  readonly healthChecks = new Counter({
    name: 'tollgate_health_checks_total',
    help: 'Active health check probes this gateway ran, by result (ok, failed).',
    labelNames: ['router', 'provider', 'result'] as const,
    registers: [this.registry],
  });
  readonly upstreamFailures = new Counter({
    name: 'tollgate_upstream_failures_total',
    help: 'Failed attempts on a provider, by kind of failure (connect, timeout, status, protocol).',
    labelNames: ['router', 'provider', 'failure'] as const,
    registers: [this.registry],
  });
  readonly tokenRefusals = new Counter({
    name: 'tollgate_token_refusals_total',
    help: 'Bearer JWTs refused (docs/identity.md), by why: expired, no_expiry (no exp), not_yet_valid, wrong_audience, unknown_issuer, bad_signature, algorithm_not_allowed, unknown_key, malformed, keys_unavailable, no_identity (no user claim), bad_groups (a groups claim that is not a list of groups), unmapped (groups giving no team), no_user (no user lists the identity), too_many_new_users (past max_new_users_per_minute).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly usersMade = new Counter({
    name: 'tollgate_users_made_total',
    help: "Users made for a token's or a sign-in's identity that no user listed (docs/identity.md), by the issuer's name.",
    labelNames: ['issuer'] as const,
    registers: [this.registry],
  });
  readonly signIns = new Counter({
    name: 'tollgate_sign_ins_total',
    help: "Single sign-ons that came back from the identity provider, by outcome: signed_in, refused (the person's groups or identity give no user), failed (an answer that could not be checked, was replayed, or an error of the provider).",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'tollgate_upstream_retries_total',
    help: 'Retries of a provider after a transient failure (after the backoff delay).',
    labelNames: ['router', 'provider'] as const,
    registers: [this.registry],
  });
  readonly cooldowns = new Counter({
    name: 'tollgate_provider_cooldowns_total',
    help: "Times a provider's circuit breaker opened in this gateway (failures in a row, or a failure rate over its window).",
    labelNames: ['router', 'provider'] as const,
    registers: [this.registry],
  });
  readonly budgetAlerts = new Counter({
    name: 'tollgate_budget_alerts_total',
    help: 'Budget alerts delivered by this gateway (each raised once per threshold and period, fleet-wide), by level and threshold in percent.',
    labelNames: ['level', 'percent'] as const,
    registers: [this.registry],
  });
  readonly alertDeliveryFailures = new Counter({
    name: 'tollgate_budget_alert_delivery_failures_total',
    help: 'Failed attempts to POST a budget alert to the webhook (each is retried).',
    registers: [this.registry],
  });
  readonly fallbacks = new Counter({
    name: 'tollgate_fallbacks_total',
    help: 'Requests a router could not serve that went on to a fallback router, by why (failed, unavailable, too_busy, context).',
    labelNames: ['from', 'to', 'reason'] as const,
    registers: [this.registry],
  });
  /** Read at scrape time from the budget alerts this gateway delivered (budget-standing.ts). */
  #budgetSource: () => Iterable<BudgetUse> = () => [];
  readonly budgetUsed = this.#scrapedGauge(
    'tollgate_budget_used_ratio',
    "Of a budget's current period, the share spent when its last alert was raised, by level (key, user, team) and id; 1 once it ran out. Only budgets that raised an alert this period, from the gateway that delivered it: read max by (level, id).",
    ['level', 'id'],
    (set) => {
      for (const use of this.#budgetSource()) set({ level: use.level, id: use.id }, use.ratio);
    },
  );
  /** Whether the store answers, from its background checks (no round trip at scrape time). */
  #storeSource: () => StoreReach | undefined = () => undefined;
  readonly storeUp = this.#scrapedGauge(
    'tollgate_store_up',
    'Whether the store answers this gateway: 1 yes, 0 no, by store (memory or redis).',
    ['store'],
    (set) => {
      const reach = this.#storeSource();
      if (reach !== undefined) set({ store: reach.store }, reach.healthy ? 1 : 0);
    },
  );
  /** Redis' mode, primary and replicas, as the store last read them (redis-topology.ts). */
  #redisSource: () => RedisTopologyView | undefined = () => undefined;
  readonly snapshotInfo = new Gauge({
    name: 'tollgate_routing_snapshot_info',
    help: 'The routing snapshot this process serves (value 1, version as a label).',
    labelNames: ['version'] as const,
    registers: [this.registry],
  });
  readonly snapshotsRefused = new Counter({
    name: 'tollgate_routing_snapshots_refused_total',
    help: 'Routing snapshots refused (Kubernetes mode: a ConfigMap with a bad checksum, format or content); the table served stays.',
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'tollgate_' });
    registerRedisMetrics(this.registry, () => this.#redisSource());
  }

  trackProviders(source: () => Iterable<ProviderGauges>): void {
    this.#providerSource = source;
  }

  trackBudgets(source: () => Iterable<BudgetUse>): void {
    this.#budgetSource = source;
  }

  trackStore(source: () => StoreReach): void {
    this.#storeSource = source;
  }

  trackRedis(source: () => RedisTopologyView): void {
    this.#redisSource = source;
  }

  /** A gauge per provider, set at scrape time from `value` (undefined leaves the provider out). */
  #providerGauge(name: string, help: string, value: (p: ProviderGauges) => number | undefined): Gauge<'router' | 'provider' | 'replica'> {
    // `replica` only on the replicas of a provider that lists several (urls).
    return this.#scrapedGauge(name, help, ['router', 'provider', 'replica'], (set) => {
      for (const p of this.#providerSource()) {
        const v = value(p);
        if (v === undefined) continue;
        set(
          p.replica === undefined
            ? { router: p.router, provider: p.provider }
            : { router: p.router, provider: p.provider, replica: p.replica },
          v,
        );
      }
    });
  }

  /** A gauge whose values `fill` sets afresh at each scrape. */
  #scrapedGauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (set: (labels: Partial<Record<L, string>>, value: number) => void) => void,
  ): Gauge<L> {
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        fill((labels, value) => this.set(labels, value));
      },
    });
  }

  setSnapshotVersion(version: string): void {
    this.snapshotInfo.reset();
    this.snapshotInfo.set({ version }, 1);
  }
}
