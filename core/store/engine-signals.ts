// What inference engines last said of their own load, shared: one gateway at a time scrapes each
// engine replica (a "target", named by a stable key such as `<provider id>@<base URL>`), records
// what it read here, and every gateway reads it back; each gateway counts here the requests it
// sends to a target, so that between two scrapes every gateway sees what the fleet has sent since
// the last. In memory a gateway shares it with no one (it scrapes every target itself); on Redis
// (redis/redis-engine-signals.ts) the fleet does. The gateway's one user of it is
// gateway/routing/engine/scraped-metrics-source.ts.

/**
 * What an engine says of its own load, the one shape of it: as its /metrics text is read
 * (gateway/routing/engine/vllm-metrics.ts), as a reading is stored here, and as routing is given
 * it (gateway/routing/engine-signals.ts). A number the engine does not report is undefined.
 */
export interface EngineLoad {
  /** Requests waiting and running, summed over the engine's label sets. */
  readonly waiting?: number | undefined;
  readonly running?: number | undefined;
  /** Share of the KV cache in use, 0 to 1. */
  readonly kvCacheUsage?: number | undefined;
  /** Prefix-cache counters (tokens queried, tokens found), since the engine started. */
  readonly prefixQueries?: number | undefined;
  readonly prefixHits?: number | undefined;
}

/** One scrape of a target: the values read, or why none were. */
export type EngineReading =
  | (EngineLoad & {
      readonly ok: true;
      /** When the scrape was read (ms since the epoch, the scraping gateway's clock). */
      readonly at: number;
    })
  | {
      readonly ok: false;
      readonly at: number;
      /** Why the scrape gave no values: unreachable, timed out, bad text. */
      readonly error: string;
    };

/** A target's latest reading, and the requests sent to it (by every gateway) since that reading was recorded. */
export interface EngineSample {
  readonly reading: EngineReading;
  readonly sentSince: number;
}

export interface EngineSignalStore {
  /**
   * Takes the scrapes of `targets` for `owner` (this gateway) for `ttlMs` each: taken when free,
   * renewed when `owner` holds them already. Returns the targets `owner` holds, so one gateway
   * scrapes each target at a time; another takes over once it stops renewing.
   */
  claimScrapes(targets: readonly string[], owner: string, ttlMs: number): Promise<ReadonlySet<string>>;
  /** Records a scrape of `target`; a good one sets its count of requests sent since back to 0. */
  record(target: string, reading: EngineReading): Promise<void>;
  /** The latest reading of each of `targets` that has one, in one round trip. */
  read(targets: readonly string[]): Promise<Map<string, EngineSample>>;
  /** One request was sent to `target`: counted in the background, never awaited, never throws. */
  sent(target: string): void;
  /** `target` is scraped no more: its reading and count go. */
  forget(target: string): Promise<void>;
}
