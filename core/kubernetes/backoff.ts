// Exponential backoff and an abortable sleep, shared by the informer, the work queue and the
// leader election, so all three back off the same way.
import { setTimeout as delay } from 'node:timers/promises';

export interface BackoffPolicy {
  /** Delay after the first failure. */
  readonly baseMs: number;
  /** Upper bound: a long outage is retried at this pace, not slower. */
  readonly maxMs: number;
}

/** base * 2^(failures-1), capped at max; `failures` counts from 1. */
export function backoffDelay(failures: number, policy: BackoffPolicy): number {
  // Capping the exponent keeps 2**n finite however long the outage lasts.
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  return Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const sleep: Sleep = async (ms, signal) => {
  signal.throwIfAborted();
  try {
    await delay(ms, undefined, { signal });
  } catch (error) {
    // timers/promises rejects with a generic AbortError; callers want to know why it was aborted.
    throw signal.aborted ? signal.reason : error;
  }
};
