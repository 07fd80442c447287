// What routing tells the metrics and the log: breakers opening and closing, health verdicts and
// probes, and queue mode's answers, fallbacks and refusals. Kept apart from routing's parts, which
// only call these events (provider-health.ts, health-checks.ts, queue/queue-placer.ts).
import type { Log } from '../../../core/log.ts';
import type { GatewayMetrics } from '../../observability/metrics.ts';
import type { QueueMetrics } from '../../observability/queue-metrics.ts';
import type { QueueEvents } from '../../queue/queue-placer.ts';
import type { HealthEvents } from '../health-checks.ts';
import type { ProviderHealthEvents } from '../provider-health.ts';
import type { ProviderRoute } from '../routing-table.ts';
import { maskUrl } from '../../providers/secrets.ts';

/** Breakers opening (counted) and closing, health verdicts changing: said in the log. */
export function providerHealthEvents(metrics: GatewayMetrics, log: Log): ProviderHealthEvents {
  return {
    opened(router, provider, until, error) {
      metrics.cooldowns.inc({ router: router.spec.name, provider: provider.spec.id });
      const seconds = Math.max(0, Math.round((until - Date.now()) / 1000));
      log.warn(where(router.spec.name, provider), `circuit breaker open for ${seconds}s after failures: ${error.message}`);
    },
    closed(router, provider) {
      log.info(where(router.spec.name, provider), 'circuit breaker closed: the provider answered a probe request');
    },
    judged(provider, healthy, reason) {
      if (healthy) log.info(where(provider.spec.router, provider), 'health checks pass: the provider takes requests');
      else log.warn(where(provider.spec.router, provider), `provider taken out: ${reason}`);
    },
  };
}

/** The log's fields for a provider, with the replica (its address, secrets masked) when it is one of several. */
function where(router: string, provider: ProviderRoute): Record<string, string> {
  return provider.replica === undefined
    ? { router, provider: provider.spec.id }
    : { router, provider: provider.spec.id, replica: maskUrl(provider.replica) };
}

/** Health probes: counted. */
export function probeEvents(metrics: GatewayMetrics): HealthEvents {
  return {
    probed(provider, ok) {
      metrics.healthChecks.inc({ router: provider.spec.router, provider: provider.spec.id, result: ok ? 'ok' : 'failed' });
    },
  };
}

/** Queue mode's answers, fallbacks and refusals: counted; a fallback said in the log once a minute at most. */
export function queueEvents(metrics: QueueMetrics, log: Log): QueueEvents {
  let fallbackWarned = 0;
  return {
    onFallback(router) {
      metrics.fallbacks.inc({ router: router.spec.name });
      // One line a minute at most: every request of an outage would otherwise log.
      const now = Date.now();
      if (now - fallbackWarned > 60_000) {
        fallbackWarned = now;
        log.warn({ router: router.spec.name }, 'queue mode: Redis does not answer, routing in the gateway until it does');
      }
    },
    onRefused(router) {
      metrics.rejections.inc({ router: router.spec.name, reason: 'unavailable' });
    },
    onAnswer(router, answer, waitedMs) {
      const name = router.spec.name;
      metrics.waitSeconds.observe({ router: name }, waitedMs / 1000);
      if (answer.status === 'ok') metrics.assignments.inc({ router: name, provider: answer.provider });
      else if (answer.status === 'busy' || answer.status === 'none') metrics.rejections.inc({ router: name, reason: answer.status });
    },
  };
}
