// The gateway's Fastify application, built from its dependencies and not yet listening, so tests
// and the server start it the same way.
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { RoutingState } from '../routing/routing-state.ts';
import type { ForwarderDeps } from '../routing/forwarder.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { errors } from './api-error.ts';
import { errorHandler, sendError } from './error-handler.ts';
import { registerInference } from './routes/inference.ts';
import { registerModels } from './routes/models.ts';
import { registerHealth } from './routes/health.ts';

export interface AppDeps {
  readonly routing: RoutingState;
  readonly forwarder: ForwarderDeps;
  readonly metrics: GatewayMetrics;
  /** Largest request body accepted, in bytes. */
  readonly bodyLimit: number;
  readonly logger: FastifyServerOptions['logger'];
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    logger: deps.logger,
    bodyLimit: deps.bodyLimit,
    // One line per request costs throughput; errors are logged where they happen.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  });
  deps.metrics.trackInFlight(function* () {
    for (const router of deps.routing.table.routers) {
      for (const provider of router.providers) yield { router: router.spec.name, provider: provider.spec.id, inFlight: provider.state.inFlight };
    }
  });
  app.setErrorHandler(errorHandler(deps.bodyLimit));
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.routeNotFound(request.method, request.url)));
  registerHealth(app, deps.routing, deps.metrics);
  registerModels(app, deps.routing);
  registerInference(app, { routing: deps.routing, forwarder: deps.forwarder, metrics: deps.metrics });
  return app;
}
