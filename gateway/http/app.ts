// The gateway's Fastify application, not yet listening: the HTTP layer over services built
// before it (startup/gateway-services.ts). It reads bodies, authenticates, answers errors in the
// route's envelope, and registers the routes, each handed only the services it uses; it builds no
// service of its own.
import { maskUrl } from '../providers/secrets.ts';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ServedRouting } from '../routing/served-routing.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Store } from '../../core/store/store.ts';
import type { RoutingCatalog } from '../catalog/catalog-service.ts';
import type { AccountDirectory } from '../accounts/account-directory.ts';
import type { LogThrottle } from '../observability/log-throttle.ts';
import { errors } from '../api/api-error.ts';
import { registerAuth, type CallerLookup, type KeyLookup } from './auth.ts';
import { errorHandler, sendError } from './error-handler.ts';
import { registerJsonBody } from './json-body.ts';
import { BodyDeadlines, type BodyTimeouts } from './body-deadlines.ts';
import type { JsonShapeLimits } from './json-shape.ts';
import { registerMultipartBody } from './multipart-body.ts';
import { clientErrorHandler } from './client-errors.ts';
import { limitConnections, type ConnectionBounds, type ConnectionLimits } from './connection-limits.ts';
import { registerApiSurfaces } from './routes/inference.ts';
import type { RequestPipeline } from '../pipeline/request-pipeline.ts';
import { modelsApi } from './routes/models.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { BreakerPolicy } from '../routing/circuit-breaker.ts';
import { registerHealth } from './routes/health.ts';
import { adminApi } from './routes/admin.ts';
import type { RoutingLive } from '../routing/assembly/routing-live.ts';
import { meApi } from './routes/me.ts';
import { usageApi } from './routes/usage.ts';
import { registerPlayground } from './routes/playground.ts';
import { signInApi } from './routes/sign-in.ts';
import type { SignIn } from '../identity/sign-in.ts';

/** How the HTTP layer behaves: the settings that are its own. */
export interface HttpOptions {
  /** Largest request body accepted, in bytes. */
  readonly bodyLimit: number;
  /** Largest audio file a transcription may upload, in bytes. */
  readonly maxAudioBytes: number;
  /** The bounds of a JSON body's shape, counted as it arrives (json-shape.ts). */
  readonly jsonShape: JsonShapeLimits;
  /** How long a body may take to arrive, and go without a byte (body-deadlines.ts). */
  readonly bodyTimeouts: BodyTimeouts;
  /** How long a connection may sit idle, and how many may be open (connection-limits.ts). */
  readonly connections: ConnectionBounds;
  /** Serve priced routers without charging when the store is down (/readyz reports it). */
  readonly failOpen: boolean;
  /** Most active (unrevoked, unexpired) API keys a user may hold. */
  readonly maxKeysPerUser: number;
  /** GET /v1/models leaves out routers that cannot serve now (no ready provider, no fallback). */
  readonly hideUnavailableModels: boolean;
  /** Serve the Playground web UI under /playground. */
  readonly playground: boolean;
}

/** The services the routes are handed (startup/gateway-services.ts builds them). */
export interface AppServices {
  readonly log: FastifyBaseLogger;
  readonly routing: ServedRouting;
  readonly metrics: GatewayMetrics;
  readonly store: Store;
  /** How API keys are looked up (a cache in front of the store when it is shared). */
  readonly keys: KeyLookup;
  /** The callers bearer JWTs stand for, when identity by token is configured. */
  readonly tokens?: CallerLookup['tokens'];
  /** Single sign-on, when the identity file configures it. */
  readonly signIn?: SignIn | undefined;
  /** Routers and providers for the admin API. */
  readonly catalog: RoutingCatalog;
  /** Users, teams and keys for the admin API and /v1/me. */
  readonly accounts: AccountDirectory;
  readonly pipeline: RequestPipeline;
  readonly throttle: LogThrottle;
  readonly breakerPolicy: BreakerPolicy;
  routingLive(): Promise<RoutingLive>;
}

/** A router with a fallback, or a provider live whose breaker lets requests through. */
function canServe(router: RouterRoute, policy: BreakerPolicy): boolean {
  if (router.fallbacks.length > 0) return true;
  const now = Date.now();
  return router.providers.some((provider) => provider.state.ready(now, policy));
}

/**
 * While the gateway drains (app.close()), a request that still arrives on an open connection is
 * refused with 503 in the API's envelope, before anything else runs; those in flight finish.
 * Fastify's own refusal (return503OnClosing) would answer in a shape of its own. So is one on a
 * connection taken past the cap, unless it is a probe's (connection-limits.ts); that connection
 * closes after its answer.
 */
function refuseWhileClosing(app: FastifyInstance, connections: ConnectionLimits): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (closing) return sendError(reply.header('connection', 'close'), errors.shuttingDown());
    if (!connections.reserved(request.raw.socket)) return done();
    if (request.routeOptions.config.probe) {
      reply.header('connection', 'close');
      return done();
    }
    sendError(reply, errors.tooManyConnections(connections.bounds.maxConnections));
  });
}

export function buildApp(options: HttpOptions, services: AppServices): FastifyInstance {
  const now = Date.now;
  const app = Fastify({
    loggerInstance: services.log,
    bodyLimit: options.bodyLimit,
    // One line per request costs throughput; errors are logged where they happen.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's log is the gateway's own: a child logger per request (its id bound) cost about
    // 1 µs of every request, for the few that log at all; those lines name the request's id
    // themselves (error-handler.ts).
    childLoggerFactory: (logger) => logger,
    // Requests arriving while the gateway drains get the shutting_down error below instead.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    // Requests no route can be found for, answered in the API's envelope rather than Fastify's.
    frameworkErrors: (error, _request, reply) =>
      sendError(reply, error.code === 'FST_ERR_BAD_URL' ? errors.badUrl() : errors.invalidRequest(error.message)),
    clientErrorHandler,
  });
  refuseWhileClosing(app, limitConnections(app.server, options.connections));
  const { routing, metrics, store, throttle } = services;
  metrics.trackProviders(function* () {
    const at = Date.now();
    for (const router of routing.table.routers) {
      for (const { spec, state, replica } of router.providers)
        yield {
          router: router.spec.name,
          provider: spec.id,
          replica: replica === undefined ? undefined : maskUrl(replica),
          inFlight: state.inFlight,
          breaker: state.breaker.state(at),
          healthy: state.healthy,
        };
    }
  });
  // Bodies are JSON; a text/plain body is refused with 415 like any other type.
  app.removeContentTypeParser('text/plain');
  const deadlines = new BodyDeadlines(options.bodyTimeouts);
  app.addHook('onClose', async () => deadlines.close());
  registerJsonBody(app, { bytes: options.bodyLimit, shape: options.jsonShape }, deadlines);
  registerMultipartBody(app, options.maxAudioBytes, deadlines);
  app.setErrorHandler(errorHandler(options.bodyLimit, throttle));
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.routeNotFound(request.method, request.url)));
  registerAuth(app, { keys: services.keys, tokens: services.tokens, sessions: services.signIn }, now, services.pipeline.traced);
  registerHealth(app, routing, metrics, {
    store,
    failOpen: options.failOpen,
    redis: store.topology === undefined ? undefined : () => store.topology!,
  });
  const policy = services.breakerPolicy;
  app.register(modelsApi, { routing, serving: options.hideUnavailableModels ? (router) => canServe(router, policy) : undefined });
  registerApiSurfaces(app, services.pipeline);
  // Accounts are read and written through the directory (file or Kubernetes mode alike); the
  // ledger is read for where budgets stand, the usage log for what was spent.
  const { accounts, catalog } = services;
  const { ledger, usage } = store;
  const { maxKeysPerUser } = options;
  app.register(adminApi, {
    users: { accounts, ledger, now, maxKeysPerUser, routing },
    teams: { accounts, ledger, now },
    catalog: { catalog, routing },
    routing: { live: () => services.routingLive() },
  });
  app.register(meApi, { keys: accounts, ledger, now, maxKeysPerUser });
  app.register(usageApi, { usage, accounts, routing, now });
  app.register(signInApi, { signIn: services.signIn });
  if (options.playground) registerPlayground(app);
  return app;
}
