// What happened to one inference request, told to the metrics.
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { ProviderRoute, RouterRoute } from '../routing/routing-table.ts';
import type { Usage } from '../billing/usage-block.ts';
import type { Api } from '../wire/apis.ts';
import type { FallbackReason } from '../routing/fallback-chain.ts';

export interface RequestOutcome {
  readonly endpoint: Endpoint;
  /** The API the caller spoke (OpenAI's, or a dialect's over the chat endpoint). */
  readonly api: Api;
  readonly router: RouterRoute | undefined;
  readonly provider: ProviderRoute | undefined;
  readonly status: number;
  readonly usage: Usage | undefined;
  /** Seconds from the request's arrival to its last byte. */
  readonly totalSeconds: number;
  /** Seconds spent on the provider for the successful attempt. */
  readonly upstreamSeconds: number | undefined;
  /** A stream's seconds from the request's arrival to its first token. */
  readonly ttftSeconds?: number | undefined;
  /** The caller's team, whose spend is counted by team. */
  readonly team?: string | undefined;
}

interface Series {
  readonly requests: { inc(): void };
  readonly duration: { observe(value: number): void };
  readonly upstream: { observe(value: number): void };
  readonly overhead: { observe(value: number): void };
  readonly promptTokens: { inc(value: number): void };
  readonly completionTokens: { inc(value: number): void };
  readonly cachedTokens: { inc(value: number): void };
  readonly cacheWriteTokens: { inc(value: number): void };
  readonly cost: { inc(value: number): void };
  readonly ttft: { observe(value: number): void };
}

interface TeamSeries {
  readonly promptTokens: { inc(value: number): void };
  readonly completionTokens: { inc(value: number): void };
  readonly cost: { inc(value: number): void };
}

/**
 * Records outcomes. The series of each metric are looked up once per label set and kept, so a
 * request costs one map lookup and a few additions.
 */
export class OutcomeRecorder {
  readonly #metrics: GatewayMetrics;
  readonly #series = new Map<string, Series>();
  readonly #teams = new Map<string, TeamSeries>();

  constructor(metrics: GatewayMetrics) {
    this.#metrics = metrics;
  }

  record(outcome: RequestOutcome): void {
    const series = this.#seriesFor(
      outcome.router?.spec.name ?? '',
      outcome.provider?.spec.id ?? '',
      outcome.endpoint,
      outcome.api,
      outcome.status,
    );
    series.requests.inc();
    series.duration.observe(outcome.totalSeconds);
    if (outcome.upstreamSeconds !== undefined) {
      series.upstream.observe(outcome.upstreamSeconds);
      series.overhead.observe(Math.max(0, outcome.totalSeconds - outcome.upstreamSeconds));
    }
    if (outcome.usage) {
      series.promptTokens.inc(outcome.usage.block.prompt_tokens);
      series.completionTokens.inc(outcome.usage.block.completion_tokens);
      // What the backend reported of its prompt cache (0 when it reported none): a series shows only once some.
      series.cachedTokens.inc(outcome.usage.cache.cached);
      series.cacheWriteTokens.inc(outcome.usage.cache.writes);
      series.cost.inc(outcome.usage.block.cost);
      if (outcome.team !== undefined) {
        const team = this.#teamSeries(outcome.team);
        team.promptTokens.inc(outcome.usage.block.prompt_tokens);
        team.completionTokens.inc(outcome.usage.block.completion_tokens);
        team.cost.inc(outcome.usage.block.cost);
      }
    }
    if (outcome.ttftSeconds !== undefined) series.ttft.observe(outcome.ttftSeconds);
  }

  /** A request `from` could not serve went on to `to`. */
  fellBack(from: RouterRoute, to: RouterRoute, reason: FallbackReason): void {
    this.#metrics.fallbacks.inc({ from: from.spec.name, to: to.spec.name, reason });
  }

  #seriesFor(router: string, provider: string, endpoint: Endpoint, api: Api, status: number): Series {
    const key = `${router}\u0000${provider}\u0000${endpoint}\u0000${api}\u0000${status}`;
    let series = this.#series.get(key);
    if (!series) {
      const m = this.#metrics;
      series = {
        requests: m.requests.series({ router, provider, endpoint, api, status }),
        duration: m.duration.series({ router, endpoint }),
        upstream: m.upstreamDuration.series({ router, provider }),
        overhead: m.overhead.series({ endpoint }),
        promptTokens: m.tokens.series({ router, provider, kind: 'prompt' }),
        completionTokens: m.tokens.series({ router, provider, kind: 'completion' }),
        cachedTokens: m.cachedTokens.series({ router, provider, kind: 'read' }),
        cacheWriteTokens: m.cachedTokens.series({ router, provider, kind: 'write' }),
        cost: m.cost.series({ router }),
        ttft: m.timeToFirstToken.series({ router }),
      };
      this.#series.set(key, series);
    }
    return series;
  }

  #teamSeries(team: string): TeamSeries {
    let series = this.#teams.get(team);
    if (!series) {
      const m = this.#metrics;
      series = {
        promptTokens: m.teamTokens.series({ team, kind: 'prompt' }),
        completionTokens: m.teamTokens.series({ team, kind: 'completion' }),
        cost: m.teamCost.series({ team }),
      };
      this.#teams.set(team, series);
    }
    return series;
  }
}
