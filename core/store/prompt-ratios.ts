// How many prompt tokens each router's backends report against the gateway's own count, kept as
// a histogram of the ratio per router in the store, so every gateway holds enough for the
// backend's chat template and tokenizer (billing/prompt-ratio-learner.ts). Ratios are put in
// buckets of 1/RATIO_STEPS, each bucket named by its upper edge (so a quantile never rounds down).

/** Buckets per unit of ratio: 1/16 = 6.25% resolution. */
export const RATIO_STEPS = 16;
/** Ratios above this count as this (the hold never multiplies the prompt by more, see the learner). */
export const MAX_RATIO = 8;
/** Once a router's counts add up past this, all are halved: older observations fade. */
export const RATIO_HALVING_TOTAL = 10_000;

/** Per router, per bucket (ratio x RATIO_STEPS, rounded up), how many requests. */
export type RatioCounts = Map<string, Map<number, number>>;

export interface PromptRatioStore {
  /** Adds observations (halving a router's counts once their total passes RATIO_HALVING_TOTAL). */
  add(counts: RatioCounts): Promise<void>;
  /** Every router's counts. */
  read(): Promise<RatioCounts>;
}

export function ratioBucket(ratio: number): number {
  return Math.min(MAX_RATIO * RATIO_STEPS, Math.max(0, Math.ceil(ratio * RATIO_STEPS)));
}

/** The ratio at or below which `quantile` of the observations lie (the bucket's upper edge); 0 without any. */
export function ratioQuantile(buckets: ReadonlyMap<number, number>, quantile: number): number {
  let total = 0;
  for (const count of buckets.values()) total += count;
  if (total === 0) return 0;
  const sorted = [...buckets].sort(([a], [b]) => a - b);
  let seen = 0;
  for (const [bucket, count] of sorted) {
    seen += count;
    if (seen >= quantile * total) return bucket / RATIO_STEPS;
  }
  return sorted[sorted.length - 1]![0] / RATIO_STEPS;
}

/** Adds `from` into `into` (memory store, and the learner's pending observations). */
export function addCounts(into: RatioCounts, from: RatioCounts): void {
  for (const [router, buckets] of from) {
    let target = into.get(router);
    if (!target) {
      target = new Map();
      into.set(router, target);
    }
    for (const [bucket, count] of buckets) target.set(bucket, (target.get(bucket) ?? 0) + count);
  }
}

/** Halves a router's counts (dropping emptied buckets) when they add up past RATIO_HALVING_TOTAL. */
export function halveIfFull(buckets: Map<number, number>): void {
  let total = 0;
  for (const count of buckets.values()) total += count;
  if (total <= RATIO_HALVING_TOTAL) return;
  for (const [bucket, count] of buckets) {
    const half = Math.floor(count / 2);
    if (half === 0) buckets.delete(bucket);
    else buckets.set(bucket, half);
  }
}
