// A clock for the engine's tests: time moves only when the test says, and timers fire in the
// order they fall due, each at its own instant, so the engine sees exactly the times it asked
// for (a discrete-event simulation), whatever the machine's speed.
import type { EngineClock } from '../../../support/vllm-emulator/engine.ts';

interface Pending {
  readonly due: number;
  readonly order: number;
  readonly callback: () => void;
}

export class VirtualClock implements EngineClock {
  #now = 0;
  #order = 0;
  readonly #pending = new Map<number, Pending>();

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const handle = ++this.#order;
    this.#pending.set(handle, { due: this.#now + ms, order: handle, callback });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.#pending.delete(handle as number);
  }

  /** Moves time to `until` (ms), firing every timer due by then at its due time. */
  advanceTo(until: number): void {
    for (;;) {
      const next = this.#earliest();
      if (!next || next.due > until) break;
      this.#pending.delete(next.order);
      this.#now = Math.max(this.#now, next.due);
      next.callback();
    }
    this.#now = Math.max(this.#now, until);
  }

  advance(ms: number): void {
    this.advanceTo(this.#now + ms);
  }

  /** Fires timers until none is left (bounded: a runaway engine fails the test, not hangs it). */
  runAll(maxTimers = 1_000_000): void {
    for (let fired = 0; fired < maxTimers; fired++) {
      const next = this.#earliest();
      if (!next) return;
      this.advanceTo(next.due);
    }
    throw new Error(`more than ${maxTimers} timers fired`);
  }

  #earliest(): Pending | undefined {
    let earliest: Pending | undefined;
    for (const pending of this.#pending.values()) {
      if (!earliest || pending.due < earliest.due || (pending.due === earliest.due && pending.order < earliest.order)) earliest = pending;
    }
    return earliest;
  }
}
