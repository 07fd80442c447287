// Active health checks: every provider with `health_check` is probed every interval with a GET of
// its kind's health route (adapter.healthPath, or health_check.path), never a user request, so
// no budget is spent. `unhealthy_after` failed probes in a row take it out (no request is placed
// on it), `healthy_after` good ones put it back. Where Redis is configured one gateway probes each
// provider at a time (it keeps the probe while it lives: a claim it renews each interval). The
// verdicts are provider health's (provider-health.ts): it records them and shares them with every
// gateway, the router workers and the operator.
import type { HealthCheck } from '../../core/resources/provider.ts';
import { bearer, type UpstreamHttp } from '../providers/upstream-http.ts';
import type { ProviderHealth } from './provider-health.ts';
import type { ProviderRoute, RoutingTable } from './routing-table.ts';

export interface HealthEvents {
  /** A probe ended, for the metrics. */
  probed(provider: ProviderRoute, ok: boolean, seconds: number): void;
}

/** The timers the checks run on; injected so that tests run the probes themselves. */
export interface Timers {
  every(ms: number, tick: () => void): { stop(): void };
}

export const REAL_TIMERS: Timers = {
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
};

export interface HealthChecksOptions {
  readonly table: () => RoutingTable;
  readonly http: UpstreamHttp;
  /** Where each probe's result goes, and who says which gateway probes. */
  readonly health: Pick<ProviderHealth, 'claimProbe' | 'probed' | 'unchecked'>;
  /** Who probes, for the fleet-wide claim: this gateway process's id. */
  readonly owner: string;
  readonly timers?: Timers;
  readonly events?: HealthEvents;
}

/** One provider's schedule and run of good or failed probes. */
interface Checked {
  /** The provider as the latest table has it (the same state, a new route per table). */
  provider: ProviderRoute;
  /** What is probed and how: a change restarts the schedule. */
  readonly target: string;
  readonly settings: HealthCheck;
  readonly timer: { stop(): void };
  good: number;
  bad: number;
  running: boolean;
}

export class HealthChecks {
  readonly #options: HealthChecksOptions;
  readonly #timers: Timers;
  readonly #checked = new Map<string, Checked>();
  #stopped = false;

  constructor(options: HealthChecksOptions) {
    this.#options = options;
    this.#timers = options.timers ?? REAL_TIMERS;
  }

  /**
   * Schedules the probes of the table's providers: called with each table served. A provider
   * whose settings did not change keeps its schedule and its run; one no longer checked is
   * forgotten (and put back in: nothing says it is down any more).
   */
  follow(table: RoutingTable): void {
    if (this.#stopped) return;
    const wanted = new Map<string, ProviderRoute>();
    for (const provider of table.providerList) {
      const settings = provider.spec.health_check;
      if (settings?.enabled && provider.adapter.healthPath !== undefined) wanted.set(provider.key, provider);
    }
    for (const [id, checked] of this.#checked) {
      const next = wanted.get(id);
      if (next && probeTarget(next) === checked.target) {
        checked.provider = next;
        continue;
      }
      checked.timer.stop();
      this.#checked.delete(id);
      if (!next) this.#options.health.unchecked(checked.provider);
    }
    for (const [id, provider] of wanted) {
      if (this.#checked.has(id)) continue;
      const settings = provider.spec.health_check!;
      const checked: Checked = {
        provider,
        target: probeTarget(provider),
        settings,
        good: 0,
        bad: 0,
        running: false,
        timer: this.#timers.every(settings.interval_seconds * 1000, () => void this.check(id)),
      };
      this.#checked.set(id, checked);
      void this.check(id);
    }
  }

  /** Probes `id` now if this gateway holds (or takes) its probe; resolves once the verdict is recorded. */
  async check(id: string): Promise<void> {
    const checked = this.#checked.get(id);
    if (!checked || checked.running) return;
    checked.running = true;
    try {
      const { provider, settings } = checked;
      // The claim outlives two missed intervals: a gateway that stops probing hands over.
      const claimed = await this.#options.health.claimProbe(provider, this.#options.owner, settings.interval_seconds * 2500);
      if (!claimed || this.#checked.get(id) !== checked) return;
      const started = performance.now();
      const failure = await this.#probe(provider, settings);
      this.#options.events?.probed(provider, failure === null, (performance.now() - started) / 1000);
      if (this.#checked.get(id) !== checked) return;
      this.#verdict(checked, failure);
    } finally {
      checked.running = false;
    }
  }

  stop(): void {
    this.#stopped = true;
    for (const checked of this.#checked.values()) checked.timer.stop();
    this.#checked.clear();
  }

  /** The probe's failure, or null when the backend answered 2xx in time. */
  async #probe(provider: ProviderRoute, settings: HealthCheck): Promise<string | null> {
    const url = (provider.spec as { url?: string }).url;
    if (url === undefined) return null;
    const timeoutMs = settings.timeout_seconds * 1000;
    try {
      await this.#options.http.get(url, settings.path ?? provider.adapter.healthPath!, {
        signal: AbortSignal.timeout(timeoutMs + 1000),
        timeouts: { connectMs: timeoutMs, firstByteMs: timeoutMs, betweenChunksMs: timeoutMs },
        headers: provider.adapter.authHeaders ? provider.adapter.authHeaders(provider.spec.key) : bearer(provider.spec.key),
      });
      return null;
    } catch (error) {
      return `health check failed: ${(error as Error).message}`;
    }
  }

  /** Counts the probe in the provider's run of good or failed ones; the verdict changes once the run is long enough. */
  #verdict(checked: Checked, failure: string | null): void {
    const { provider, settings } = checked;
    const { healthy } = provider.state;
    if (failure === null) {
      checked.good++;
      checked.bad = 0;
    } else {
      checked.bad++;
      checked.good = 0;
    }
    let verdict: boolean | undefined;
    if (failure === null && healthy !== true && (healthy === undefined || checked.good >= settings.healthy_after)) verdict = true;
    if (failure !== null && healthy !== false && checked.bad >= settings.unhealthy_after) verdict = false;
    this.#options.health.probed(provider, failure, verdict);
  }
}

/** Everything a probe depends on, as one text. */
function probeTarget(provider: ProviderRoute): string {
  const { spec } = provider;
  return JSON.stringify([spec.type, (spec as { url?: string }).url, spec.key, spec.health_check]);
}
