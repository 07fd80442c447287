// The timer functions of what runs on a schedule (the operator's work queue, a gateway's serving
// report), injectable so that tests fire them by hand instead of sleeping.
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's timers. Unref'd: a pending timer alone does not keep the process alive. */
export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
