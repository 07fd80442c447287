// Waiting for a quiet machine before a measurement: other work on the 2 shared cores (a test
// suite, a build, the hypervisor taking time) moves the figures by more than the code being
// measured does. Shared by the modes of `npm run bench` that measure round by round (bench/run.ts,
// bench/serial.ts), with a bounded budget of waiting for the whole run.
import { otherLoad, type CpuUse } from './cpu.ts';

/** Other processes' CPU, in % of one core, above which a measurement waits for quiet. */
export const QUIET_THRESHOLD_PERCENT = 15;
/**
 * CPU time the hypervisor takes from this VM, in % of all cores' time, above which a measurement
 * waits too: stolen time slows the server under test as much as another process would, and on
 * these machines it comes and goes (0% for one run, 30% for the next).
 */
export const STEAL_THRESHOLD_PERCENT = 5;

type Load = Pick<CpuUse, 'otherPercent' | 'stealPercent'>;

const percent = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)}%`);

export const noisy = (use: Load) =>
  (use.otherPercent ?? 0) >= QUIET_THRESHOLD_PERCENT || (use.stealPercent ?? 0) >= STEAL_THRESHOLD_PERCENT;

export const describeNoise = (use: Load) => `other processes ${percent(use.otherPercent)} of a core, steal ${percent(use.stealPercent)}`;

/** The waiting a run may still do, in ms; once spent, what is measured stands (and is marked). */
export class QuietBudget {
  remainingMs: number;
  private readonly log: (line: string) => void;

  constructor(seconds: number, log: (line: string) => void) {
    this.remainingMs = seconds * 1000;
    this.log = log;
  }

  /** Waits until other load is below the thresholds, or the budget is spent. */
  async wait(): Promise<void> {
    if (this.remainingMs <= 0) return;
    let load = await otherLoad();
    if (!noisy(load)) return;
    this.log(`  ${describeNoise(load)}; waiting up to ${(this.remainingMs / 1000).toFixed(0)} s for quiet`);
    const start = Date.now();
    while (noisy(load) && Date.now() - start < this.remainingMs) load = await otherLoad();
    this.remainingMs -= Date.now() - start;
  }

  /** Counts time spent measuring again (a run that other load disturbed) against the budget. */
  spend(ms: number): void {
    this.remainingMs -= ms;
  }
}
