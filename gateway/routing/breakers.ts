// The gateway's circuit breakers (circuit-breaker.ts), one per provider, and what they share: an
// opening or closing is written to the store (provider-health.ts) so that every gateway, the
// router workers and the operator follow it, and this gateway follows theirs. Writes never delay
// a request: they run in the background, and a store that does not answer only leaves the
// breakers local until it does (resync on reconnection).
import type { ProviderHealthStore, ProviderNotice } from '../../core/store/provider-health.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';
import type { BreakerPolicy } from './circuit-breaker.ts';
import type { ProviderRoute, RouterRoute, RoutingTable } from './routing-table.ts';

export interface BreakerEvents {
  opened(router: RouterRoute, provider: ProviderRoute, until: number, error: UpstreamError): void;
  closed(router: RouterRoute, provider: ProviderRoute): void;
}

export interface BreakersOptions {
  readonly policy: BreakerPolicy;
  /** Wall clock (ms): openings are shared as times. */
  readonly now: () => number;
  readonly shared: ProviderHealthStore;
  readonly events?: BreakerEvents;
}

export class Breakers {
  readonly policy: BreakerPolicy;
  readonly #now: () => number;
  readonly #shared: ProviderHealthStore;
  readonly #events: BreakerEvents | undefined;

  constructor(options: BreakersOptions) {
    this.policy = options.policy;
    this.#now = options.now;
    this.#shared = options.shared;
    this.#events = options.events;
  }

  /** An attempt on `provider` was answered. */
  success(router: RouterRoute, provider: ProviderRoute): void {
    if (!provider.state.breaker.recordSuccess(this.#now(), this.policy)) return;
    this.#events?.closed(router, provider);
    this.#shared.close(provider.spec.id, router.spec.name).catch(() => {});
  }

  /** An attempt on `provider` failed (the provider's fault); returns whether the breaker opened. */
  failure(router: RouterRoute, provider: ProviderRoute, error: UpstreamError): boolean {
    const until = provider.state.breaker.recordFailure(this.#now(), this.policy, error.message);
    if (until === undefined) return false;
    this.#events?.opened(router, provider, until, error);
    this.#shared.open(provider.spec.id, until, error.message).catch(() => {});
    return true;
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
      const conditions = await this.#shared.read(providers.map((p) => p.spec.id));
      const now = this.#now();
      for (const provider of providers) {
        const condition = conditions.get(provider.spec.id);
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
