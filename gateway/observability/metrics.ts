// Prometheus metrics of the data plane, on a registry of their own (no global state). Those
// updated on every request are Series metrics (series-metrics.ts): plain arithmetic per update.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series-metrics.ts';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new SeriesCounter({
    name: 'tollgate_requests_total',
    help: 'Inference requests answered, by router, provider, endpoint and HTTP status.',
    labelNames: ['router', 'provider', 'endpoint', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new SeriesHistogram({
    name: 'tollgate_request_duration_seconds',
    help: 'Total time to answer an inference request, streaming included.',
    labelNames: ['router', 'endpoint'] as const,
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
  readonly cost = new SeriesCounter({
    name: 'tollgate_cost_total',
    help: 'Cost charged, in the money of router prices.',
    labelNames: ['router'] as const,
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
  /** Read at scrape time from the providers' own counters, so the hot path pays nothing. */
  #inFlightSource: () => Iterable<{ router: string; provider: string; inFlight: number }> = () => [];
  readonly inFlight = (() => {
    const source = () => this.#inFlightSource();
    return new Gauge({
      name: 'tollgate_provider_in_flight_requests',
      help: 'Requests in flight per provider.',
      labelNames: ['router', 'provider'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { router, provider, inFlight } of source()) this.set({ router, provider }, inFlight);
      },
    });
  })();
  readonly upstreamFailures = new Counter({
    name: 'tollgate_upstream_failures_total',
    help: 'Failed attempts on a provider, by kind of failure (connect, timeout, status, protocol).',
    labelNames: ['router', 'provider', 'failure'] as const,
    registers: [this.registry],
  });
  readonly cooldowns = new Counter({
    name: 'tollgate_provider_cooldowns_total',
    help: 'Times a provider was set to sit out after repeated failures.',
    labelNames: ['router', 'provider'] as const,
    registers: [this.registry],
  });
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
  }

  trackInFlight(source: () => Iterable<{ router: string; provider: string; inFlight: number }>): void {
    this.#inFlightSource = source;
  }

  setSnapshotVersion(version: string): void {
    this.snapshotInfo.reset();
    this.snapshotInfo.set({ version }, 1);
  }
}
