// What happened to one inference request, told to whoever keeps account of it (metrics now).
import type { Endpoint } from '../../resources/kinds.ts';
import type { GatewayMetrics } from '../../observability/metrics.ts';
import type { ProviderRoute, RouterRoute } from '../../routing/routing-table.ts';
import type { Usage } from '../../usage/usage-block.ts';

export interface RequestOutcome {
  readonly endpoint: Endpoint;
  readonly router: RouterRoute | undefined;
  readonly provider: ProviderRoute | undefined;
  readonly status: number;
  readonly usage: Usage | undefined;
  /** Seconds from the request's arrival to its last byte. */
  readonly totalSeconds: number;
  /** Seconds spent on the provider for the successful attempt. */
  readonly upstreamSeconds: number | undefined;
}

export function recordOutcome(metrics: GatewayMetrics, outcome: RequestOutcome): void {
  const router = outcome.router?.spec.name ?? '';
  const provider = outcome.provider?.spec.id ?? '';
  metrics.requests.inc({ router, provider, endpoint: outcome.endpoint, status: outcome.status });
  metrics.duration.observe({ router, endpoint: outcome.endpoint }, outcome.totalSeconds);
  if (outcome.upstreamSeconds !== undefined) {
    metrics.upstreamDuration.observe({ router, provider }, outcome.upstreamSeconds);
    metrics.overhead.observe({ endpoint: outcome.endpoint }, Math.max(0, outcome.totalSeconds - outcome.upstreamSeconds));
  }
  if (outcome.usage) {
    metrics.tokens.inc({ router, provider, kind: 'prompt' }, outcome.usage.block.prompt_tokens);
    metrics.tokens.inc({ router, provider, kind: 'completion' }, outcome.usage.block.completion_tokens);
    metrics.cost.inc({ router }, outcome.usage.block.cost);
  }
}
