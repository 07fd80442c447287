// The seam for what inference engines say of their own load (docs/architecture.md, "Adding a
// routing signal"): a MetricsSource reads each engine replica (a "target") in the background (a
// vLLM's /metrics: requests waiting and running, KV cache use, prefix-cache counters) and keeps
// the latest, so that a scorer (scoring.ts) reads it on a request's path without waiting.
// Routing's composition (routing/assembly/routing-parts.ts) makes the source, has it follow each
// table served and stops it with the gateway. The real source is engine/scraped-metrics-source.ts;
// NO_ENGINE_SIGNALS reads nothing.
import type { ProviderType } from '../../core/resources/kinds.ts';
import type { RoutingTable } from './routing-table.ts';
import type { EngineLoad } from '../../core/store/engine-signals.ts';

/**
 * One engine replica whose signals are read. Keyed by replica, not by provider: a provider may
 * stand for several replicas (URLs), each with its own load.
 */
export interface EngineTarget {
  /** Stable id of the replica, e.g. `<provider id>@<base URL>`: what signals() and sent() are asked with. */
  readonly key: string;
  readonly providerId: string;
  /** The replica's base URL (its /metrics is read under it). */
  readonly url: string;
  readonly kind: ProviderType;
}

/**
 * What an engine last reported (its EngineLoad), as routing weighs it: `waiting` also holds the
 * requests the fleet sent it since it was read (sentSinceRead).
 */
export interface EngineSignals extends EngineLoad {
  /** Requests the fleet sent to it since it was read, already counted in `waiting`. */
  readonly sentSinceRead?: number | undefined;
  /** When they were read (ms since the epoch). */
  readonly readAt: number;
}

/** Why signals() gives what it gives: fresh signals, or why there are none. */
export type SignalsFreshness =
  /** Read `ageMs` ago, recently enough to be used. */
  | { readonly state: 'fresh'; readonly ageMs: number }
  /** The last good read is older than the source's bound: not used. */
  | { readonly state: 'stale'; readonly ageMs: number }
  /** The last scrape failed (unreachable, timed out, bad text): not used. */
  | { readonly state: 'failing'; readonly ageMs: number; readonly reason: string }
  /** Never read: not (yet) scraped, or not a target. */
  | { readonly state: 'unknown' };

export interface MetricsSource {
  /** The target's latest signals; undefined when none are fresh (staleness says why). Never waits. */
  signals(target: string): EngineSignals | undefined;
  /** Whether the target's signals are fresh, and their age. */
  staleness(target: string): SignalsFreshness;
  /** One request was dispatched to the target: counted in its `waiting` until the next read. Never waits, never throws. */
  sent(target: string): void;
  /** The targets read now. */
  targets(): readonly EngineTarget[];
  /** Reads the targets of `table` from now on: called with each table served. */
  follow(table: RoutingTable): void;
  stop(): void;
}

/** No engine read: every target's signals are unknown. */
export const NO_ENGINE_SIGNALS: MetricsSource = Object.freeze({
  signals: () => undefined,
  staleness: () => ({ state: 'unknown' }) as const,
  sent() {},
  targets: () => [],
  follow() {},
  stop() {},
});
