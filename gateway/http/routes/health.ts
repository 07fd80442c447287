// Liveness, readiness (with the routing snapshot being served, and whether the store answers)
// and Prometheus metrics: public, for probes and scrapers that hold no API key.
import type { FastifyInstance } from 'fastify';
import type { ServedRouting } from '../../routing/served-routing.ts';
import type { GatewayMetrics } from '../../observability/metrics.ts';
import { PUBLIC } from '../auth.ts';
import type { ReadinessView } from '../views/readiness.ts';
import { readinessDetail, type RedisTopologyView } from '../../../core/store/redis/redis-topology.ts';

export interface HealthDeps {
  /** Whether the store answers: known from its background checks, so /readyz costs no round trip. */
  readonly store: { readonly healthy: boolean };
  /** A gateway that fails open serves without the store, so stays ready without it. */
  readonly failOpen: boolean;
  /** Redis: its mode, the primary connected to and its replicas (read in the background). */
  readonly redis?: (() => RedisTopologyView) | undefined;
}

/** Probes and scrapers hold no API key, and are answered on the connections kept for them past the cap. */
const PROBE = { ...PUBLIC, probe: true };

export function registerHealth(app: FastifyInstance, routing: ServedRouting, metrics: GatewayMetrics, deps: HealthDeps): void {
  app.get('/healthz', { config: PROBE }, () => ({ status: 'ok' }));
  app.get('/readyz', { config: PROBE }, (_request, reply): ReadinessView => {
    // Not ready until a routing snapshot is served (Kubernetes mode, before its ConfigMap is read).
    const waiting = routing.waiting;
    if (waiting !== undefined) {
      reply.code(503);
      return { status: 'not ready', reason: waiting };
    }
    // Nor while the store (Redis) does not answer: priced requests and new keys would get 503.
    const redis = deps.redis === undefined ? {} : { redis: readinessDetail(deps.redis()) };
    const ready = { status: 'ready' as const, snapshot: routing.table.version, routers: routing.table.routers.length, ...redis };
    if (deps.store.healthy) return ready;
    if (deps.failOpen) return { ...ready, store: 'unavailable' as const };
    reply.code(503);
    return { status: 'not ready', reason: 'the store (Redis) does not answer', ...redis };
  });
  app.get('/metrics', { config: PROBE }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
