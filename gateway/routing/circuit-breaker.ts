// A provider's circuit breaker: closed (requests go), open (none go, for the open time), then
// half-open (a few probe requests go; the first answer closes it, a failure opens it again).
// It opens on `threshold` failures in a row, or on a failure rate over a sliding window once the
// window holds enough requests, so a backend failing one request in two opens it as surely as
// one failing every request. Where Redis is configured an opening is shared (provider-health.ts):
// the other gateways open theirs until the same time.

export interface BreakerPolicy {
  /** Failures in a row that open the breaker. */
  readonly threshold: number;
  /** How long it stays open before probes go through, in ms. */
  readonly cooldownMs: number;
  /** The window the failure rate is measured over, in ms. */
  readonly windowMs: number;
  /** Failures over requests in the window, from 0 to 1, that open it. */
  readonly failureRate: number;
  /** Requests the window must hold before its rate counts. */
  readonly minRequests: number;
  /** Requests let through at once while half-open. */
  readonly halfOpenProbes: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** The window is counted in this many buckets, each a tenth of it. */
const BUCKETS = 10;

export class CircuitBreaker {
  /** Until when it is open (ms); 0 when closed. Past it, it is half-open until an answer decides. */
  openUntil = 0;
  /** Why it opened last. */
  reason: string | null = null;
  consecutiveFailures = 0;
  /** Probe requests in flight while half-open. */
  #probes = 0;
  readonly #requests = new Array<number>(BUCKETS).fill(0);
  readonly #failures = new Array<number>(BUCKETS).fill(0);
  /** The bucket's start (ms, a multiple of the bucket's length) the counts were last moved to. */
  #bucketStart = 0;

  state(now: number): BreakerState {
    if (this.openUntil === 0) return 'closed';
    return now < this.openUntil ? 'open' : 'half_open';
  }

  /** Whether a request may be placed on the provider now (half-open: while probes are left). */
  allows(now: number, policy: BreakerPolicy): boolean {
    const state = this.state(now);
    return state === 'closed' || (state === 'half_open' && this.#probes < policy.halfOpenProbes);
  }

  /** A request was placed on the provider: counted as a probe while half-open. Returns whether it was one (give it back with probeDone). */
  placed(now: number): boolean {
    if (this.state(now) !== 'half_open') return false;
    this.#probes++;
    return true;
  }

  probeDone(): void {
    if (this.#probes > 0) this.#probes--;
  }

  /** An answer came: closes the breaker when it was not closed. Returns whether it closed now. */
  recordSuccess(now: number, policy: BreakerPolicy): boolean {
    this.#count(now, policy, false);
    this.consecutiveFailures = 0;
    if (this.openUntil === 0) return false;
    this.#close();
    return true;
  }

  /** A failure: returns the time the breaker is open until when this failure opened it (or opened it again), else undefined. */
  recordFailure(now: number, policy: BreakerPolicy, reason: string): number | undefined {
    this.#count(now, policy, true);
    this.consecutiveFailures++;
    const state = this.state(now);
    if (state === 'open') return undefined;
    const tripped =
      state === 'half_open' ||
      this.consecutiveFailures >= policy.threshold ||
      (this.#sum(this.#requests) >= policy.minRequests && this.#sum(this.#failures) >= policy.failureRate * this.#sum(this.#requests));
    if (!tripped) return undefined;
    return this.openFor(now + policy.cooldownMs, reason);
  }

  /** Opens until `until` (another gateway's opening too); an opening already longer stays. Returns the time it is open until. */
  openFor(until: number, reason: string): number {
    if (until > this.openUntil) {
      this.openUntil = until;
      this.reason = reason;
    }
    this.consecutiveFailures = 0;
    this.#probes = 0;
    this.#requests.fill(0);
    this.#failures.fill(0);
    return this.openUntil;
  }

  /** Closed by another gateway whose probe was answered. */
  closeShared(): void {
    if (this.openUntil !== 0) this.#close();
  }

  #close(): void {
    this.openUntil = 0;
    this.reason = null;
    this.#probes = 0;
    this.#requests.fill(0);
    this.#failures.fill(0);
  }

  #count(now: number, policy: BreakerPolicy, failed: boolean): void {
    const bucketMs = Math.max(1, policy.windowMs / BUCKETS);
    const start = now - (now % bucketMs);
    const elapsed = Math.round((start - this.#bucketStart) / bucketMs);
    if (elapsed > 0) {
      // Buckets older than the window are emptied as the window moves on.
      for (let i = 1; i <= Math.min(elapsed, BUCKETS); i++) {
        const index = (this.#index(this.#bucketStart, bucketMs) + i) % BUCKETS;
        this.#requests[index] = 0;
        this.#failures[index] = 0;
      }
      this.#bucketStart = start;
    }
    const index = this.#index(start, bucketMs);
    this.#requests[index]!++;
    if (failed) this.#failures[index]!++;
  }

  #index(start: number, bucketMs: number): number {
    return Math.floor(start / bucketMs) % BUCKETS;
  }

  #sum(counts: readonly number[]): number {
    let sum = 0;
    for (const count of counts) sum += count;
    return sum;
  }
}
