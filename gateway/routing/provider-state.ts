// Runtime state of each provider: requests in flight (for least_busy and the gauge) and recent
// failures (for the cool-down). Kept by provider id outside the routing table, so a reloaded
// table keeps counting where the last one left off.

export interface FailurePolicy {
  /** Consecutive failures that send a provider to sit out. */
  readonly threshold: number;
  /** How long it sits out, in milliseconds. */
  readonly cooldownMs: number;
}

export class ProviderState {
  inFlight = 0;
  consecutiveFailures = 0;
  coolingUntil = 0;
  /** Moving average of the time to first token (ms; the whole answer's time when not streamed), for lowest_latency. */
  ttftMs = 0;
  /** Answers measured into ttftMs. */
  measured = 0;

  recordTtft(ms: number): void {
    this.ttftMs = this.measured === 0 ? ms : this.ttftMs * 0.8 + ms * 0.2;
    this.measured++;
  }

  isCooling(now: number): boolean {
    return this.coolingUntil > now;
  }

  recordSuccess(): void {
    this.consecutiveFailures = 0;
    this.coolingUntil = 0;
  }

  /** Returns true when this failure starts a cool-down. */
  recordFailure(now: number, policy: FailurePolicy): boolean {
    this.consecutiveFailures++;
    if (this.consecutiveFailures < policy.threshold) return false;
    this.consecutiveFailures = 0;
    this.coolingUntil = now + policy.cooldownMs;
    return true;
  }
}

/** Where round robin stands for one router. */
export interface Cursor {
  next: number;
}

export class ProviderStates {
  readonly #states = new Map<string, ProviderState>();
  readonly #cursors = new Map<string, Cursor>();

  cursor(routerName: string): Cursor {
    let cursor = this.#cursors.get(routerName);
    if (!cursor) {
      cursor = { next: 0 };
      this.#cursors.set(routerName, cursor);
    }
    return cursor;
  }

  get(providerId: string): ProviderState {
    let state = this.#states.get(providerId);
    if (!state) {
      state = new ProviderState();
      this.#states.set(providerId, state);
    }
    return state;
  }

  /** Drops the state of providers that no longer exist. */
  retain(providerIds: ReadonlySet<string>, routerNames: ReadonlySet<string>): void {
    for (const id of this.#states.keys()) if (!providerIds.has(id)) this.#states.delete(id);
    for (const name of this.#cursors.keys()) if (!routerNames.has(name)) this.#cursors.delete(name);
  }
}
