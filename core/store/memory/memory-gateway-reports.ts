// Gateway reports of a single process. A standalone gateway has no operator to read them, but the
// contract is the same as on Redis: a report lives for its TTL, on the store's clock.
import type { GatewayReports, ServingGateway } from '../gateway-reports.ts';

export class MemoryGatewayReports implements GatewayReports {
  readonly #reports = new Map<string, { version: string; at: string; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async report(pod: string, version: string, ttlMs: number, at = new Date(this.#now())): Promise<void> {
    this.#reports.set(pod, { version, at: at.toISOString(), until: this.#now() + ttlMs });
  }

  async forget(pod: string): Promise<void> {
    this.#reports.delete(pod);
  }

  async list(): Promise<ServingGateway[]> {
    const now = this.#now();
    const live: ServingGateway[] = [];
    for (const [pod, report] of this.#reports) {
      if (report.until <= now) this.#reports.delete(pod);
      else live.push({ pod, version: report.version, at: report.at });
    }
    return live.sort((a, b) => (a.pod < b.pod ? -1 : 1));
  }
}
