// What the gateway knows of each provider's health, and its one owner (docs/failure-handling.md):
// the provider's circuit breaker (circuit-breaker.ts: opened by failures, closed by an answered
// probe request), the health checks' verdict (health-checks.ts runs the probes and hands their
// results here), and the cooling policy queue mode's scripts apply fleet-wide as slots are given
// back. Every change is made to the provider's state (provider-state.ts) and written to the store
// (core/store/provider-health.ts), so that every gateway, the router workers and the operator
// follow it; and this gateway follows theirs (follow). Writes never delay a request: they run in
// the background, and a store that does not answer only leaves the state local until it does
// (resync on reconnection).
import type { CoolingPolicy, ProviderHealthStore, ProviderNotice, ProviderRef } from '../../core/store/provider-health.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';
import type { BreakerPolicy } from './circuit-breaker.ts';
import type { ProviderRoute, RouterRoute, RoutingTable } from './routing-table.ts';

export interface ProviderHealthEvents {
  /** A failure opened the provider's breaker until `until` (ms since the epoch). */
  opened(router: RouterRoute, provider: ProviderRoute, until: number, error: UpstreamError): void;
  /** A probe request was answered: the breaker closed. */
  closed(router: RouterRoute, provider: ProviderRoute): void;
  /** The health checks' verdict changed (or was given the first time). */
  judged(provider: ProviderRoute, healthy: boolean, reason: string | null): void;
}

export interface ProviderHealthOptions {
  readonly policy: BreakerPolicy;
  /** Wall clock (ms): openings and verdicts are shared as times. */
  readonly now: () => number;
  readonly shared: ProviderHealthStore;
  readonly events?: ProviderHealthEvents;
}

export class ProviderHealth {
  readonly policy: BreakerPolicy;
  /** What queue mode's scripts apply fleet-wide on the releases of this gateway's slots: the breakers' numbers. */
  readonly cooling: CoolingPolicy;
  readonly #now: () => number;
  readonly #shared: ProviderHealthStore;
  readonly #events: ProviderHealthEvents | undefined;

  constructor(options: ProviderHealthOptions) {
    this.policy = options.policy;
    this.cooling = Object.freeze({ threshold: options.policy.threshold, cooldownMs: options.policy.cooldownMs });
    this.#now = options.now;
    this.#shared = options.shared;
    this.#events = options.events;
  }

  /** An attempt on `provider` was answered. */
  success(router: RouterRoute, provider: ProviderRoute): void {
    if (!provider.state.breaker.recordSuccess(this.#now(), this.policy)) return;
    this.#events?.closed(router, provider);
    this.#shared.close(refOf(provider)).catch(() => {});
  }

  /** An attempt on `provider` failed (the provider's fault); returns whether the breaker opened. */
  failure(router: RouterRoute, provider: ProviderRoute, error: UpstreamError): boolean {
    const until = provider.state.breaker.recordFailure(this.#now(), this.policy, error.message);
    if (until === undefined) return false;
    this.#events?.opened(router, provider, until, error);
    this.#shared.open(refOf(provider), until, error.message).catch(() => {});
    return true;
  }

  /**
   * Takes `provider`'s next health probe for `owner` (this gateway) for `ttlMs`: false when
   * another gateway has it, so one probe per interval runs fleet-wide. A store that does not
   * answer lets every gateway probe.
   */
  claimProbe(provider: ProviderRoute, owner: string, ttlMs: number): Promise<boolean> {
    return this.#shared.claimProbe(provider.key, owner, ttlMs).catch(() => true);
  }

  /**
   * A health probe of `provider` ended: `failure` says why it failed (null: it answered), and
   * `verdict` is the health checks' new verdict when this probe changed it.
   */
  probed(provider: ProviderRoute, failure: string | null, verdict: boolean | undefined): void {
    const { state } = provider;
    const now = this.#now();
    state.checkedAt = now;
    if (failure !== null && state.healthy === false) state.healthReason = failure;
    if (verdict === undefined) return;
    state.healthy = verdict;
    state.healthReason = failure;
    this.#events?.judged(provider, verdict, failure);
    this.#shared.reportHealth(refOf(provider), verdict, failure, now).catch(() => {});
  }

  /** `provider` is not checked any more (its checks were turned off, or it is gone): back in, and forgotten fleet-wide. */
  unchecked(provider: ProviderRoute): void {
    provider.state.healthy = undefined;
    provider.state.healthReason = null;
    this.#shared.forgetHealth(refOf(provider)).catch(() => {});
  }

  /**
   * Follows the other gateways' openings, closings and health verdicts on the providers of the
   * table served (`table()`, read at each notice). Returns what stops following.
   */
  follow(table: () => RoutingTable): () => void {
    const apply = (notice: ProviderNotice) => {
      const provider = table().provider(notice.id);
      if (!provider) return;
      const { state } = provider;
      if (notice.kind === 'open') state.breaker.openFor(notice.until, notice.reason);
      else if (notice.kind === 'closed') state.breaker.closeShared();
      else {
        state.healthy = notice.healthy;
        state.healthReason = notice.reason;
        state.checkedAt = this.#now();
      }
    };
    const resync = async () => {
      const providers = table().providerList;
      const conditions = await this.#shared.read(providers.map(refOf));
      const now = this.#now();
      for (const provider of providers) {
        const condition = conditions.get(provider.key);
        if (!condition) continue;
        const { state } = provider;
        if (condition.openUntil > now) state.breaker.openFor(condition.openUntil, condition.reason ?? 'opened by another gateway');
        if (condition.healthy !== undefined && provider.spec.health_check?.enabled) {
          state.healthy = condition.healthy;
          state.healthReason = condition.healthy ? null : condition.reason;
          state.checkedAt = condition.checkedAt;
        }
      }
    };
    return this.#shared.onNotice((notice) => {
      if (notice) apply(notice);
      else resync().catch(() => {});
    });
  }
}

/** How the shared store finds a route's health: by its key, in its router's place. */
function refOf(provider: ProviderRoute): ProviderRef {
  return { router: provider.spec.router, id: provider.key };
}
