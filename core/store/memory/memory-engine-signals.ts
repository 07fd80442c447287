// Engine signals of a standalone gateway (store/engine-signals.ts): no one to share with, so
// every scrape is this gateway's to make, and what it records is what it reads back.
import type { EngineReading, EngineSample, EngineSignalStore } from '../engine-signals.ts';

export class MemoryEngineSignals implements EngineSignalStore {
  readonly #readings = new Map<string, EngineReading>();
  readonly #sent = new Map<string, number>();

  async claimScrapes(targets: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(targets);
  }

  async record(target: string, reading: EngineReading): Promise<void> {
    this.#readings.set(target, reading);
    if (reading.ok) this.#sent.set(target, 0);
  }

  async read(targets: readonly string[]): Promise<Map<string, EngineSample>> {
    const samples = new Map<string, EngineSample>();
    for (const target of targets) {
      const reading = this.#readings.get(target);
      if (reading) samples.set(target, { reading, sentSince: this.#sent.get(target) ?? 0 });
    }
    return samples;
  }

  sent(target: string): void {
    this.#sent.set(target, (this.#sent.get(target) ?? 0) + 1);
  }

  async forget(target: string): Promise<void> {
    this.#readings.delete(target);
    this.#sent.delete(target);
  }
}
