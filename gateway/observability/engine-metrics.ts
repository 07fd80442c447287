// The engines' load and prefix affinity's predictions in /metrics (docs/routing-modes.md,
// "Seeing the engines and the cache"), per router and replica: what each vLLM replica last
// reported (requests waiting and running, KV cache use), the saturation verdict local placement
// reaches on it and the age of its signals, and, of the requests prefix_affinity placed on it, the
// prompt blocks and those it was predicted to hold (their quotient in PromQL is the predicted
// prefix-hit ratio). Everything is read at scrape time from what routing keeps in memory anyway,
// so the request path pays nothing.
import { Counter, Gauge, type Registry } from 'prom-client';

/** One replica (route) of a router, as the families below read it at scrape time. */
export interface ReplicaGauges {
  readonly router: string;
  readonly provider: string;
  /** One of the provider's several replicas (its address, secrets masked); undefined for a provider of one. */
  readonly replica: string | undefined;
  /** Its engine's signals, while fresh; undefined without (not vllm, not read yet, stale, failing). */
  readonly engine:
    | {
        readonly waiting: number | undefined;
        readonly running: number | undefined;
        readonly kvCacheUsage: number | undefined;
        readonly saturated: boolean;
      }
    | undefined;
  /** Age of its engine's last good reading (seconds), fresh or not; undefined when never read or not an engine read. */
  readonly signalsAgeSeconds: number | undefined;
  /** prefix_affinity's predictions for it (counters); undefined for a router of another strategy. */
  readonly prefix: { readonly predictedHitBlocks: number; readonly promptBlocks: number } | undefined;
}

type Labels = 'router' | 'provider' | 'replica';
const LABELS = ['router', 'provider', 'replica'] as const;

export class EngineMetrics {
  readonly #source: () => Iterable<ReplicaGauges>;

  constructor(registry: Registry, source: () => Iterable<ReplicaGauges>) {
    this.#source = source;
    const gauge = (name: string, help: string, value: (r: ReplicaGauges) => number | undefined) =>
      new Gauge({ name, help, labelNames: LABELS, registers: [registry], collect: this.#collector(value) });
    const counter = (name: string, help: string, value: (r: ReplicaGauges) => number | undefined) =>
      new Counter({ name, help, labelNames: LABELS, registers: [registry], collect: this.#collector(value) });
    gauge(
      'tollgate_provider_engine_waiting_requests',
      "Requests waiting in the replica's engine as it last reported (vLLM's num_requests_waiting), plus those the fleet sent it since; absent without fresh signals.",
      (r) => r.engine?.waiting,
    );
    gauge(
      'tollgate_provider_engine_running_requests',
      "Requests running in the replica's engine as it last reported (vLLM's num_requests_running); absent without fresh signals.",
      (r) => r.engine?.running,
    );
    gauge(
      'tollgate_provider_engine_kv_cache_usage_ratio',
      "Share of the replica's KV cache in use (0 to 1) as it last reported; absent without fresh signals.",
      (r) => r.engine?.kvCacheUsage,
    );
    gauge(
      'tollgate_provider_engine_saturated',
      "1 while the replica's engine is saturated (waiting at saturation.max_waiting or KV use at max_kv_cache): local placement sends it nothing new while another has room; absent without fresh signals.",
      (r) => (r.engine === undefined ? undefined : r.engine.saturated ? 1 : 0),
    );
    gauge(
      'tollgate_provider_engine_signals_age_seconds',
      "Age of the last good reading of the replica's engine /metrics; signals older than three scrape intervals are not used.",
      (r) => r.signalsAgeSeconds,
    );
    counter(
      'tollgate_provider_prefix_predicted_hit_blocks_total',
      'prefix_affinity: of the prompt blocks placed on the replica by this gateway, those it was predicted to hold in its prefix cache.',
      (r) => r.prefix?.predictedHitBlocks,
    );
    counter(
      'tollgate_provider_prefix_prompt_blocks_total',
      'prefix_affinity: prompt blocks (256 characters each) of the requests this gateway placed on the replica.',
      (r) => r.prefix?.promptBlocks,
    );
  }

  /** A collect() that sets the metric of each replica `value` gives a number for, and drops the others. */
  #collector(value: (r: ReplicaGauges) => number | undefined) {
    const source = () => this.#source();
    return function (this: Gauge<Labels> | Counter<Labels>): void {
      this.reset();
      for (const r of source()) {
        const v = value(r);
        if (v === undefined) continue;
        // `replica` only on the replicas of a provider that lists several (urls), as the provider gauges.
        const labels =
          r.replica === undefined
            ? { router: r.router, provider: r.provider }
            : { router: r.router, provider: r.provider, replica: r.replica };
        if (this instanceof Gauge) this.set(labels, v);
        else this.inc(labels, v);
      }
    };
  }
}
