// Prompt-ratio histograms of a single process.
import { addCounts, halveIfFull, type PromptRatioStore, type RatioCounts } from '../prompt-ratios.ts';

export class MemoryPromptRatios implements PromptRatioStore {
  readonly #ratios: RatioCounts = new Map();

  async add(counts: RatioCounts): Promise<void> {
    addCounts(this.#ratios, counts);
    for (const router of counts.keys()) halveIfFull(this.#ratios.get(router)!);
  }

  async read(): Promise<RatioCounts> {
    return new Map([...this.#ratios].map(([router, buckets]) => [router, new Map(buckets)]));
  }
}
