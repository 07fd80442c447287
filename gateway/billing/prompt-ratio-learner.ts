// Learns, per router, how many prompt tokens its backends report against the gateway's count
// (with template overhead, worst-case.ts), so the hold covers the backend's own chat template
// and tokenizer. Observations are gathered in the process and sent to the store every
// `intervalMs`, which answers with every gateway's; the hold reads the local copy, so learning
// adds no round trip to a request. The hold uses a high quantile of the ratio (QUANTILE), never
// below 1 nor above MAX_HOLD_RATIO.
import { addCounts, ratioBucket, ratioQuantile, type PromptRatioStore, type RatioCounts } from '../../core/store/prompt-ratios.ts';

/** The share of requests whose prompt the hold covers, once learned. */
export const QUANTILE = 0.99;
/** The most the hold multiplies a prompt count by (a report further off is an anomaly, usage-block.ts). */
export const MAX_HOLD_RATIO = 4;

export class PromptRatioLearner {
  readonly #store: PromptRatioStore;
  readonly #onError: (error: Error) => void;
  #pending: RatioCounts = new Map();
  #ratios = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #syncing: Promise<void> | undefined;
  /** The last sync failed: further failures are not told again until one succeeds. */
  #failing = false;

  constructor(store: PromptRatioStore, onError: (error: Error) => void) {
    this.#store = store;
    this.#onError = onError;
  }

  /** Syncs every `intervalMs` from now on (and once at once, to start from what peers learned). */
  start(intervalMs: number): void {
    void this.sync();
    this.#timer = setInterval(() => void this.sync(), intervalMs);
    this.#timer.unref();
  }

  stop(): Promise<void> {
    clearInterval(this.#timer);
    return this.sync();
  }

  /** The ratio the router's prompt counts are multiplied by in holds (1 until learned). */
  ratio(router: string): number {
    return this.#ratios.get(router) ?? 1;
  }

  /** A backend reported `reported` prompt tokens for a prompt the gateway counted `base` for. */
  observe(router: string, reported: number, base: number): void {
    if (base <= 0) return;
    const bucket = ratioBucket(reported / base);
    let buckets = this.#pending.get(router);
    if (!buckets) {
      buckets = new Map();
      this.#pending.set(router, buckets);
    }
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
  }

  /** Sends what was observed and reads back every router's ratio; one at a time. */
  sync(): Promise<void> {
    this.#syncing ??= this.#sync().finally(() => (this.#syncing = undefined));
    return this.#syncing;
  }

  async #sync(): Promise<void> {
    const pending = this.#pending;
    this.#pending = new Map();
    try {
      await this.#store.add(pending);
    } catch (error) {
      // Kept for the next sync.
      addCounts(this.#pending, pending);
      this.#failed(error as Error);
      return;
    }
    try {
      const counts = await this.#store.read();
      const ratios = new Map<string, number>();
      for (const [router, buckets] of counts) ratios.set(router, Math.min(MAX_HOLD_RATIO, Math.max(1, ratioQuantile(buckets, QUANTILE))));
      this.#ratios = ratios;
      this.#failing = false;
    } catch (error) {
      // The ratios learned so far stay.
      this.#failed(error as Error);
    }
  }

  #failed(error: Error): void {
    if (!this.#failing) this.#onError(error);
    this.#failing = true;
  }
}
