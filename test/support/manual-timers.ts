// Timers that only fire when the test says so, and remember the delays asked for.
import type { Timers } from '../../core/timers.ts';

export class ManualTimers implements Timers {
  readonly delays: number[] = [];
  readonly #pending = new Map<number, () => void>();
  #next = 1;

  setTimeout(callback: () => void, ms: number): unknown {
    this.delays.push(ms);
    this.#pending.set(this.#next, callback);
    return this.#next++;
  }
  clearTimeout(handle: unknown): void {
    this.#pending.delete(handle as number);
  }
  get pending(): number {
    return this.#pending.size;
  }
  fireAll(): void {
    const callbacks = [...this.#pending.values()];
    this.#pending.clear();
    for (const callback of callbacks) callback();
  }
}
