// The one polling loop of the tests, for what converges on its own (a record written just after
// an answer, a watch that catches up, a process that comes up): read until the value is
// accepted or time runs out. No test sleeps a fixed time and then asserts.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { SETTLE_MS } from './patience.ts';

export interface PollOptions {
  /** Default SETTLE_MS (patience.ts). */
  readonly timeoutMs?: number;
  /** Pause between reads; default 20 ms. */
  readonly intervalMs?: number;
}

/**
 * Reads until `accept` holds for the value (a read that throws counts as not yet), or the time
 * is up; returns the last value and whether it was accepted, for the caller to assert on.
 */
export async function poll<T>(
  read: () => T | Promise<T>,
  accept: (value: T) => boolean,
  options: PollOptions = {},
): Promise<{ value: T | undefined; accepted: boolean; error: unknown }> {
  const deadline = Date.now() + (options.timeoutMs ?? SETTLE_MS);
  let value: T | undefined;
  let error: unknown;
  for (;;) {
    try {
      value = await read();
      error = undefined;
      if (accept(value)) return { value, accepted: true, error };
    } catch (thrown) {
      error = thrown;
    }
    if (Date.now() >= deadline) return { value, accepted: false, error };
    await sleep(options.intervalMs ?? 20);
  }
}

/**
 * Retries `probe` until it gives a value (anything but undefined, null or false) and returns it;
 * fails saying what it waited for, the last value or error, and what `processes` last wrote.
 */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  what: string,
  options: PollOptions & { readonly processes?: readonly { output(): string }[] } = {},
): Promise<Exclude<T, undefined | null | false>> {
  const { value, accepted, error } = await poll(probe, (v) => v !== undefined && v !== null && v !== false, options);
  if (accepted) return value as Exclude<T, undefined | null | false>;
  const outputs = (options.processes ?? []).map((p, i) => `\n--- process ${i} ---\n${p.output().slice(-6000)}`).join('');
  const last = error === undefined ? `last value: ${JSON.stringify(value)}` : `last error: ${String(error)}`;
  assert.fail(`not within ${options.timeoutMs ?? SETTLE_MS} ms: ${what} (${last})${outputs}`);
}
