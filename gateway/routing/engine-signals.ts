// The seam for what inference engines say of their own load (docs/architecture.md, "Adding a
// routing signal"): a MetricsSource reads each provider's engine in the background (a vLLM's
// /metrics: requests waiting and running, KV cache use) and keeps the latest, so that a scorer
// (scoring.ts) reads it on a request's path without waiting. Routing's composition
// (routing/assembly/routing-parts.ts) makes the source, has it follow each table served and stops
// it with the gateway. No engine is read yet: NO_ENGINE_SIGNALS.
import type { RoutingTable } from './routing-table.ts';

/** What an engine last reported; a field it does not report is undefined. */
export interface EngineSignals {
  /** Requests the engine holds waiting, and running. */
  readonly waiting?: number | undefined;
  readonly running?: number | undefined;
  /** Share of its KV cache in use, from 0 to 1. */
  readonly kvCacheUsage?: number | undefined;
  /** When they were read (ms since the epoch): a scorer may leave out signals too old. */
  readonly readAt: number;
}

export interface MetricsSource {
  /** The provider's latest signals; undefined when none were read. Never waits. */
  signals(providerId: string): EngineSignals | undefined;
  /** Reads the providers of `table` from now on: called with each table served. */
  follow(table: RoutingTable): void;
  stop(): void;
}

/** No engine read: every provider's signals are unknown. */
export const NO_ENGINE_SIGNALS: MetricsSource = Object.freeze({
  signals: () => undefined,
  follow() {},
  stop() {},
});
