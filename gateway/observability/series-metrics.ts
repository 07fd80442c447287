// Counters and histograms for the request path whose updates are plain arithmetic. prom-client
// hashes and validates the label object on every inc() and observe(), even through a labelled
// child: seven times a request here. These keep one series object per label set, which the
// caller looks up once and keeps, and hand prom-client the totals only when /metrics is scraped.
import { Counter, Histogram, type CounterConfiguration, type HistogramConfiguration, type LabelValues } from 'prom-client';

type HistogramValues<T extends string> = Awaited<ReturnType<Histogram<T>['get']>>;

/** One label set of a SeriesCounter. */
export class CounterSeries<T extends string> {
  readonly labels: LabelValues<T>;
  value = 0;

  constructor(labels: LabelValues<T>) {
    this.labels = labels;
  }

  inc(by = 1): void {
    this.value += by;
  }
}

/** A Counter whose series are counted in CounterSeries and copied into it at scrape time. */
export class SeriesCounter<T extends string> extends Counter<T> {
  readonly #series: Map<string, CounterSeries<T>>;

  constructor(config: Omit<CounterConfiguration<T>, 'collect'>) {
    const series = new Map<string, CounterSeries<T>>();
    super({
      ...config,
      collect() {
        this.reset();
        for (const { labels, value } of series.values()) if (value > 0) this.inc(labels, value);
      },
    });
    this.#series = series;
  }

  /** The series of `labels`, created on first use; keep it rather than asking again per update. */
  series(labels: LabelValues<T>): CounterSeries<T> {
    return seriesOf(this.#series, labels, () => new CounterSeries(labels));
  }
}

/** One label set of a SeriesHistogram: a count per bucket (not cumulative), the sum and count. */
export class HistogramSeries<T extends string> {
  readonly labels: LabelValues<T>;
  readonly buckets: number[];
  readonly #bounds: readonly number[];
  sum = 0;
  count = 0;

  constructor(labels: LabelValues<T>, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    this.buckets = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.buckets[i]! += 1;
        return;
      }
    }
  }
}

/**
 * A Histogram whose series are kept in HistogramSeries. prom-client has no public way to set a
 * histogram's buckets, so this one answers get() itself, in prom-client's own shape (cumulative
 * `_bucket` values with `le`, then `_sum` and `_count`), which the registry prints.
 */
export class SeriesHistogram<T extends string> extends Histogram<T> {
  readonly #series = new Map<string, HistogramSeries<T>>();
  readonly #name: string;
  readonly #help: string;
  readonly #bounds: readonly number[];

  constructor(config: Omit<HistogramConfiguration<T>, 'collect'> & { buckets: readonly number[] }) {
    super({ ...config, buckets: [...config.buckets] });
    this.#name = config.name;
    this.#help = config.help;
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
  }

  /** The series of `labels`, created on first use; keep it rather than asking again per update. */
  series(labels: LabelValues<T>): HistogramSeries<T> {
    return seriesOf(this.#series, labels, () => new HistogramSeries(labels, this.#bounds));
  }

  override async get(): Promise<HistogramValues<T>> {
    const values: { labels: LabelValues<string>; value: number; metricName: string }[] = [];
    for (const { labels, buckets, sum, count } of this.#series.values()) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += buckets[i]!;
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${this.#name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.#name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.#name}_sum` });
      values.push({ labels, value: count, metricName: `${this.#name}_count` });
    }
    // prom-client's declared type also lists `collect`, which its own get() does not return.
    return { name: this.#name, help: this.#help, type: 'histogram', values, aggregator: 'sum' } as unknown as HistogramValues<T>;
  }

  /** The registry prefers this to get() when a metric has it (prom-client's Histogram does). */
  getForPromString(): Promise<HistogramValues<T>> {
    return this.get();
  }

  /** Zeroes every series in place: callers keep theirs. (prom-client's constructor calls this too.) */
  override reset(): void {
    // Before this class's fields exist (called from prom-client's constructor) there is nothing.
    if (#series in this) {
      for (const series of this.#series.values()) {
        series.buckets.fill(0);
        series.sum = 0;
        series.count = 0;
      }
    }
    super.reset();
  }
}

/** The series of one label set in `all`, made by `make` the first time (label order does not matter). */
function seriesOf<S>(all: Map<string, S>, labels: object, make: () => S): S {
  const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
  let found = all.get(key);
  if (found === undefined) {
    found = make();
    all.set(key, found);
  }
  return found;
}
