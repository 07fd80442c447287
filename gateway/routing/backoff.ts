// How long to wait before trying a provider again: exponential backoff with jitter, and the
// backend's own `retry-after` when it is short (docs/failure-handling.md).

export interface BackoffPolicy {
  /** The first retry's delay, before jitter. */
  readonly baseMs: number;
  /** No delay grows past this. */
  readonly maxMs: number;
  /** A `retry-after` up to this long is waited for; a longer one means "not now": the provider is not retried. */
  readonly retryAfterMaxMs: number;
}

/**
 * The delay before retry round `round` (1, 2, ...): base × 2^(round-1), capped, then "equal
 * jitter" (a random point of its upper half), so delays keep growing round to round while two
 * gateways retrying the same backend spread apart. `random` is in [0, 1).
 */
export function backoffMs(policy: BackoffPolicy, round: number, random: number): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, round - 1));
  return ceiling / 2 + (ceiling / 2) * random;
}
