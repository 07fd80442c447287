// What the gateways know of each backend's health, shared: a circuit breaker one gateway opened
// or a cool-down queue mode started (the provider gets no requests until the time it names), and
// the verdict of the active health checks. In memory a gateway shares it with no one; on Redis
// every gateway, the router workers (queue mode reads and writes the same fields, declared once in
// redis/provider-fields.ts) and the operator (ModelProvider status) see it
// (docs/failure-handling.md). A gateway's one writer of it is gateway/routing/provider-health.ts.

export interface ProviderCondition {
  /** A circuit breaker is open on the provider until this time (ms since the epoch); 0: closed. */
  readonly openUntil: number;
  /** The health checks' verdict; undefined while the provider is not checked. */
  readonly healthy: boolean | undefined;
  /** Why it is out: the failure that opened the breaker, or the failed probe's; null when in. */
  readonly reason: string | null;
  /** When the verdict was last given (ms since the epoch), or null. */
  readonly checkedAt: number | null;
}

/**
 * The cool-downs queue mode's scripts apply fleet-wide as slots are given back (redis/lua/
 * health-common.lua): after `threshold` failures in a row the provider sits out `cooldownMs`. A
 * gateway's provider health gives its own (gateway/routing/provider-health.ts); a 429's
 * retry-after cools it too, never longer than `cooldownMs`.
 */
export interface CoolingPolicy {
  readonly threshold: number;
  readonly cooldownMs: number;
}

export const UNKNOWN_CONDITION: ProviderCondition = Object.freeze({ openUntil: 0, healthy: undefined, reason: null, checkedAt: null });

/** A change another gateway made. */
export type ProviderNotice =
  | { readonly id: string; readonly kind: 'open'; readonly until: number; readonly reason: string }
  | { readonly id: string; readonly kind: 'closed' }
  | { readonly id: string; readonly kind: 'health'; readonly healthy: boolean; readonly reason: string | null };

/**
 * A provider as the store finds it: its id (a route's key: `<id>` or `<id>@<address>`) and the
 * router it serves (on a Redis Cluster its keys lie in its router's slot, with its queue's).
 */
export interface ProviderRef {
  readonly router: string;
  readonly id: string;
}

export interface ProviderHealthStore {
  /** Opens the provider's breaker for every gateway until `until`. */
  open(provider: ProviderRef, until: number, reason: string): Promise<void>;
  /** Closes it (a probe request succeeded); its router is told so that its waiting requests (queue mode) may go. */
  close(provider: ProviderRef): Promise<void>;
  /** Records a health check's verdict; its router is told when it comes back. */
  reportHealth(provider: ProviderRef, healthy: boolean, reason: string | null, at: number): Promise<void>;
  /** Forgets a provider that is not checked any more (its checks were turned off, or it is gone). */
  forgetHealth(provider: ProviderRef): Promise<void>;
  /** The providers' conditions, by id. */
  read(providers: readonly ProviderRef[]): Promise<Map<string, ProviderCondition>>;
  /** Takes the provider's next probe for `owner` for `ttlMs`: false when another gateway has it, so one probe per interval runs fleet-wide. */
  claimProbe(id: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Calls `listener` with each change another gateway made, and with null when everything should be read again. */
  onNotice(listener: (notice: ProviderNotice | null) => void): () => void;
}
