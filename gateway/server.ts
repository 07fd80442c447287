// Starts the gateway from a configuration file: loads and validates it, builds the routing
// table and the app, listens, reloads the file on SIGHUP and drains on SIGTERM/SIGINT.
import type { FastifyInstance } from 'fastify';
import { loadConfigFile } from './config/config-file.ts';
import type { GatewaySettings } from './config/settings.ts';
import { buildApp } from './http/app.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { UpstreamHttp } from './providers/upstream-http.ts';
import { RoutingState } from './routing/routing-state.ts';

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly routing: RoutingState;
  /** Re-reads the configuration file; an invalid file leaves the current table in place. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

export async function startGateway(settings: GatewaySettings, env: Readonly<Record<string, string | undefined>>): Promise<RunningGateway> {
  const snapshot = await loadConfigFile(settings.config, env);
  const metrics = new GatewayMetrics();
  const routing = new RoutingState(snapshot, (table) => metrics.setSnapshotVersion(table.version));
  const http = new UpstreamHttp();
  const app = buildApp({
    routing,
    metrics,
    bodyLimit: settings.bodyLimit,
    logger: { level: settings.logLevel, redact: ['req.headers.authorization'] },
    forwarder: {
      http,
      options: { maxAttempts: settings.maxAttempts, threshold: settings.failureThreshold, cooldownMs: settings.cooldownSeconds * 1000 },
      random: Math.random,
      now: Date.now,
      onFailure: (router, provider, error, coolingDown) => {
        metrics.upstreamFailures.inc({ router: router.spec.name, provider: provider.spec.id, failure: error.failure });
        if (coolingDown) {
          metrics.cooldowns.inc({ router: router.spec.name, provider: provider.spec.id });
          app.log.warn({ router: router.spec.name, provider: provider.spec.id }, `provider sits out for ${settings.cooldownSeconds}s after repeated failures: ${error.message}`);
        }
      },
    },
  });
  app.addHook('onClose', () => http.close());
  const address = await app.listen({ host: settings.host, port: settings.port });
  app.log.info({ routers: routing.table.routers.length, snapshot: routing.table.version }, `Tollgate gateway serving ${settings.config} on ${address}`);
  return {
    app,
    url: address,
    routing,
    async reload() {
      try {
        const table = routing.load(await loadConfigFile(settings.config, env));
        app.log.info({ snapshot: table.version, routers: table.routers.length }, 'configuration reloaded');
      } catch (error) {
        app.log.error(`configuration not reloaded, still serving the previous one: ${(error as Error).message}`);
      }
    },
    close: () => app.close(),
  };
}
