// The MetricsSource of engine replicas that serve Prometheus /metrics (vLLM): every interval, one
// round for all targets: it claims the scrapes of the targets (the store says which this gateway
// holds: with Redis one gateway a target at a time, fleet-wide; in memory all of them), scrapes
// the ones it holds, at most one scrape in flight per target, each bounded by a deadline, records
// what each read in the store, and reads every target's latest reading back in one round trip.
// Between two readings a target's `waiting` grows by the requests sent to it since (sent():
// counted in the store for the whole fleet, and here for what this gateway sent since its last
// read). Signals older than `staleAfterMs`, or whose last scrape failed, are not given:
// routing then chooses as it does without them. Nothing here ever throws out of the loop.
import type { EngineReading, EngineSample, EngineSignalStore } from '../../../core/store/engine-signals.ts';
import { realTimers, type Timers } from '../../../core/timers.ts';
import type { EngineSignals, EngineTarget, MetricsSource, SignalsFreshness } from '../engine-signals.ts';
import type { RoutingTable } from '../routing-table.ts';
import { vllmTargets } from './engine-targets.ts';
import { type ScrapeOutcome, scrapeMetrics } from './metrics-scrape.ts';

export interface ScrapeEvents {
  /** A scrape of `target` starts. */
  started?(target: EngineTarget): void;
  /** A scrape of `target` ended with `reading`, recorded for the fleet. */
  scraped?(target: EngineTarget, reading: EngineReading): void;
}

export interface ScrapedMetricsSourceOptions {
  /** Where readings are claimed, recorded and read, and sends counted. */
  readonly store: EngineSignalStore;
  /** This gateway process's id, for the fleet-wide claims. */
  readonly owner: string;
  /** Time between two rounds (ms). */
  readonly intervalMs: number;
  /** A scrape not answered within this long is aborted. Default: intervalMs. */
  readonly timeoutMs?: number;
  /** Signals read longer ago than this are stale. Default: three intervals. */
  readonly staleAfterMs?: number;
  /** The targets of a table. Default: one per vllm provider (engine-targets.ts). */
  readonly targetsOf?: (table: RoutingTable) => readonly EngineTarget[];
  /** One scrape. Default: GET <url>/metrics read as vLLM's (metrics-scrape.ts). */
  readonly scrape?: (target: EngineTarget, signal: AbortSignal) => Promise<ScrapeOutcome>;
  readonly timers?: Timers;
  /** Wall clock (ms): readings are shared as times. */
  readonly now?: () => number;
  readonly events?: ScrapeEvents;
}

/** A scrape in flight: what aborts it, and its deadline's timer. */
interface InFlight {
  readonly controller: AbortController;
  readonly deadline: unknown;
}

export class ScrapedMetricsSource implements MetricsSource {
  readonly #store: EngineSignalStore;
  readonly #owner: string;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #staleAfterMs: number;
  readonly #targetsOf: (table: RoutingTable) => readonly EngineTarget[];
  readonly #scrape: (target: EngineTarget, signal: AbortSignal) => Promise<ScrapeOutcome>;
  readonly #timers: Timers;
  readonly #now: () => number;
  readonly #events: ScrapeEvents;
  #targets = new Map<string, EngineTarget>();
  /** Each target's latest reading (read back from the store, or just recorded here). */
  readonly #samples = new Map<string, EngineSample>();
  /** Requests this gateway sent each target since its last read of the store. */
  readonly #sentHere = new Map<string, number>();
  readonly #inFlight = new Map<string, InFlight>();
  #round: Promise<ReadonlySet<string>> | undefined;
  #timer: unknown;
  #stopped = false;

  constructor(options: ScrapedMetricsSourceOptions) {
    this.#store = options.store;
    this.#owner = options.owner;
    this.#intervalMs = options.intervalMs;
    this.#timeoutMs = options.timeoutMs ?? options.intervalMs;
    this.#staleAfterMs = options.staleAfterMs ?? 3 * options.intervalMs;
    this.#targetsOf = options.targetsOf ?? vllmTargets;
    this.#scrape = options.scrape ?? ((target, signal) => scrapeMetrics(target.url, { signal }));
    this.#timers = options.timers ?? realTimers;
    this.#now = options.now ?? Date.now;
    this.#events = options.events ?? {};
  }

  signals(target: string): EngineSignals | undefined {
    const sample = this.#samples.get(target);
    if (!sample?.reading.ok || this.#now() - sample.reading.at > this.#staleAfterMs) return undefined;
    const { reading } = sample;
    const sent = sample.sentSince + (this.#sentHere.get(target) ?? 0);
    return {
      waiting: reading.waiting === undefined ? undefined : reading.waiting + sent,
      running: reading.running,
      kvCacheUsage: reading.kvCacheUsage,
      prefixQueries: reading.prefixQueries,
      prefixHits: reading.prefixHits,
      sentSinceRead: sent,
      readAt: reading.at,
    };
  }

  staleness(target: string): SignalsFreshness {
    const reading = this.#samples.get(target)?.reading;
    if (!reading) return { state: 'unknown' };
    const ageMs = Math.max(0, this.#now() - reading.at);
    if (!reading.ok) return { state: 'failing', ageMs, reason: reading.error };
    return ageMs > this.#staleAfterMs ? { state: 'stale', ageMs } : { state: 'fresh', ageMs };
  }

  sent(target: string): void {
    if (!this.#targets.has(target)) return;
    this.#sentHere.set(target, (this.#sentHere.get(target) ?? 0) + 1);
    this.#store.sent(target);
  }

  targets(): readonly EngineTarget[] {
    return [...this.#targets.values()];
  }

  follow(table: RoutingTable): void {
    if (this.#stopped) return;
    const next = new Map(this.#targetsOf(table).map((target) => [target.key, target]));
    for (const [key, target] of this.#targets) {
      if (next.get(key)?.url === target.url) continue;
      this.#abort(key);
      this.#samples.delete(key);
      this.#sentHere.delete(key);
    }
    this.#targets = next;
    // The first round comes one interval after the first target: a gateway starting up has nothing to route yet.
    if (next.size === 0) this.#unschedule();
    else if (this.#timer === undefined) this.#schedule();
  }

  /**
   * One round now: claims, starts the scrapes this gateway holds that are not in flight, reads
   * every target back. Resolves once the scrapes it started are recorded (a round joins one
   * whose claims and read are still under way).
   */
  async tick(): Promise<void> {
    if (this.#stopped) return;
    this.#round ??= this.#claimAndRead().finally(() => {
      this.#round = undefined;
    });
    const started = [...(await this.#round)].filter((key) => !this.#inFlight.has(key));
    await Promise.all(started.map((key) => this.#scrapeOne(key)));
  }

  stop(): void {
    this.#stopped = true;
    this.#unschedule();
    for (const key of [...this.#inFlight.keys()]) this.#abort(key);
  }

  /** Takes the claims and reads the readings, together; returns the targets this gateway holds. */
  async #claimAndRead(): Promise<ReadonlySet<string>> {
    const keys = [...this.#targets.keys()];
    if (keys.length === 0) return new Set();
    // What was counted here until now is in the store before the read (one connection, in order).
    this.#sentHere.clear();
    const [claimed, samples] = await Promise.all([
      this.#store.claimScrapes(keys, this.#owner, 3 * this.#intervalMs).catch(() => new Set<string>()),
      this.#store.read(keys).catch(() => undefined),
    ]);
    for (const [key, sample] of samples ?? []) {
      // A read sent before this gateway recorded a newer scrape may come back after it: keep the newer.
      const known = this.#samples.get(key)?.reading.at ?? -Infinity;
      if (this.#targets.has(key) && sample.reading.at >= known) this.#samples.set(key, sample);
    }
    return claimed;
  }

  async #scrapeOne(key: string): Promise<void> {
    const target = this.#targets.get(key);
    if (!target || this.#stopped || this.#inFlight.has(key)) return;
    const controller = new AbortController();
    const deadline = this.#timers.setTimeout(
      () => controller.abort(new Error(`/metrics did not answer within ${this.#timeoutMs} ms`)),
      this.#timeoutMs,
    );
    const flight: InFlight = { controller, deadline };
    this.#inFlight.set(key, flight);
    this.#events.started?.(target);
    let outcome: ScrapeOutcome;
    try {
      outcome = await this.#scrape(target, controller.signal);
    } catch (error) {
      outcome = { ok: false, error: error instanceof Error ? error.message : String(error) };
    } finally {
      this.#timers.clearTimeout(deadline);
      if (this.#inFlight.get(key) === flight) this.#inFlight.delete(key);
    }
    // Stopped, or the target went (or changed) meanwhile: the reading is of nothing followed.
    if (this.#stopped || this.#targets.get(key)?.url !== target.url) return;
    const at = this.#now();
    const reading: EngineReading = outcome.ok ? { ok: true, at, ...outcome.load } : { ok: false, at, error: outcome.error };
    this.#samples.set(key, { reading, sentSince: 0 });
    if (reading.ok) this.#sentHere.delete(key);
    this.#events.scraped?.(target, reading);
    await this.#store.record(key, reading).catch(() => {});
  }

  #abort(key: string): void {
    const flight = this.#inFlight.get(key);
    if (!flight) return;
    this.#timers.clearTimeout(flight.deadline);
    this.#inFlight.delete(key);
    flight.controller.abort(new Error('stopped'));
  }

  #schedule(): void {
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopped || this.#targets.size === 0) return;
      this.#schedule();
      void this.tick();
    }, this.#intervalMs);
  }

  #unschedule(): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
