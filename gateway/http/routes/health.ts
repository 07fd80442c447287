// Liveness, readiness (with the routing snapshot being served) and Prometheus metrics: public,
// for probes and scrapers that hold no API key.
import type { FastifyInstance } from 'fastify';
import type { RoutingState } from '../../routing/routing-state.ts';
import type { GatewayMetrics } from '../../observability/metrics.ts';
import { PUBLIC } from '../auth.ts';

export function registerHealth(app: FastifyInstance, routing: RoutingState, metrics: GatewayMetrics): void {
  app.get('/healthz', { config: PUBLIC }, () => ({ status: 'ok' }));
  app.get('/readyz', { config: PUBLIC }, (_request, reply) => {
    // Not ready until a routing snapshot is served (Kubernetes mode, before its ConfigMap is read).
    const waiting = routing.waiting;
    if (waiting !== undefined) {
      reply.code(503);
      return { status: 'not ready', reason: waiting };
    }
    return { status: 'ready', snapshot: routing.table.version, routers: routing.table.routers.length };
  });
  app.get('/metrics', { config: PUBLIC }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
