// A gateway pod tells the operator which routing snapshot it serves: `tg:gateways:<pod>` in Redis,
// written at every load and refreshed on a timer, with a TTL a few refreshes long so the report
// of a pod that died without a word expires by itself. The operator sets a router `Programmed`
// once every live report names a snapshot holding the router's generation.
import type { Log } from '../../core/log.ts';
import type { GatewayReports } from '../../core/store/gateway-reports.ts';
import { realTimers, type Timers } from '../../core/timers.ts';

/** What the report needs of the store. */
export type ServingReports = Pick<GatewayReports, 'report' | 'forget'>;

export interface ServingReportOptions {
  readonly reports: ServingReports;
  readonly pod: string;
  /** The version served now; undefined while nothing is (nothing is reported then). */
  readonly version: () => string | undefined;
  readonly log: Log;
  /** Default 10 s. */
  readonly intervalMs?: number;
  /** Default 30 s: three refreshes may fail before the report expires. */
  readonly ttlMs?: number;
  readonly timers?: Timers;
}

export class ServingReport {
  readonly #options: ServingReportOptions;
  readonly #timers: Timers;
  #timer: unknown;
  #failing = false;
  /** Reports go one at a time, so an older one can never land after a newer one. */
  #chain: Promise<void> = Promise.resolve();

  constructor(options: ServingReportOptions) {
    this.#options = options;
    this.#timers = options.timers ?? realTimers;
  }

  start(): void {
    this.#arm();
    this.report();
  }

  /** The next refresh; each re-arms the one after it, until stop(). */
  #arm(): void {
    this.#timer = this.#timers.setTimeout(() => {
      this.report();
      this.#arm();
    }, this.#options.intervalMs ?? 10_000);
  }

  /** Reports the version served now (after a load, and on the timer); failures are logged, never thrown. */
  report(): void {
    this.#chain = this.#chain.then(() => this.#send());
  }

  /** Stops reporting and removes the report: this pod serves no more. */
  async stop(): Promise<void> {
    this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#chain;
    try {
      await this.#options.reports.forget(this.#options.pod);
    } catch (error) {
      this.#options.log.warn({ pod: this.#options.pod, err: error }, 'could not remove the serving report; it expires by itself');
    }
  }

  async #send(): Promise<void> {
    const version = this.#options.version();
    if (version === undefined) return;
    try {
      await this.#options.reports.report(this.#options.pod, version, this.#options.ttlMs ?? 30_000);
      if (this.#failing) this.#options.log.info({ pod: this.#options.pod, snapshot: version }, 'serving report written again');
      this.#failing = false;
    } catch (error) {
      // Once per outage: the timer retries, and the store logs its own connection trouble.
      if (!this.#failing) this.#options.log.warn({ pod: this.#options.pod, err: error }, 'could not report the snapshot served; retrying');
      this.#failing = true;
    }
  }
}
