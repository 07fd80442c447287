// The gateway's Fastify application, built from its dependencies and not yet listening, so tests
// and the server start it the same way.
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { ServedRouting } from '../routing/served-routing.ts';
import type { ForwarderDeps } from '../routing/forwarder.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Store } from '../../core/store/store.ts';
import type { RoutingCatalog } from '../catalog/catalog-service.ts';
import type { AccountDirectory } from '../accounts/account-directory.ts';
import { Billing, type BillingMetrics } from '../billing/billing.ts';
import { PromptRatioLearner } from '../billing/prompt-ratio-learner.ts';
import { microsToNumber } from '../metering/cost.ts';
import { LogThrottle } from '../observability/log-throttle.ts';
import { errors } from '../api/api-error.ts';
import { registerAuth, type KeyLookup } from './auth.ts';
import { errorHandler, sendError } from './error-handler.ts';
import { registerJsonBody } from './json-body.ts';
import { BodyDeadlines, type BodyTimeouts } from './body-deadlines.ts';
import type { JsonShapeLimits } from './json-shape.ts';
import type { StoredLimits } from '../dialects/responses/responses-dialect.ts';
import { registerMultipartBody } from './multipart-body.ts';
import { closeAudioProbe } from '../endpoints/audio-probe.ts';
import { clientErrorHandler } from './client-errors.ts';
import { registerApiSurfaces } from './routes/inference.ts';
import { OutcomeRecorder } from '../pipeline/request-outcome.ts';
import { RequestPipeline } from '../pipeline/request-pipeline.ts';
import { registerModels } from './routes/models.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { BreakerPolicy } from '../routing/circuit-breaker.ts';
import { registerHealth } from './routes/health.ts';
import { registerAdminUsers } from './routes/admin-users.ts';
import { registerAdminTeams } from './routes/admin-teams.ts';
import { registerAdminRouters } from './routes/admin-routers.ts';
import { registerAdminProviders } from './routes/admin-providers.ts';
import { registerAdminRouting } from './routes/admin-routing.ts';
import type { RoutingLive } from '../queue/queue-mode.ts';
import { registerMe } from './routes/me.ts';
import { registerUsage } from './routes/usage.ts';
import { registerPlayground } from './routes/playground.ts';

export interface AppDeps {
  readonly routing: ServedRouting;
  readonly forwarder: ForwarderDeps;
  /** The live state of routing (GET /v1/admin/routing). */
  readonly routingLive: () => Promise<RoutingLive>;
  readonly metrics: GatewayMetrics;
  readonly store: Store;
  /** How API keys are looked up (a cache in front of the store when it is shared). */
  readonly keys: KeyLookup;
  /** Routers and providers for the admin API. */
  readonly catalog: RoutingCatalog;
  /** Users, teams and keys for the admin API and /v1/me. */
  readonly accounts: AccountDirectory;
  readonly now: () => number;
  /** Largest request body accepted, in bytes. */
  readonly bodyLimit: number;
  /** Largest audio file a transcription may upload, in bytes. */
  readonly maxAudioBytes: number;
  /** How large a conversation the Responses API may store. */
  readonly storedResponses: StoredLimits;
  /** The bounds of a JSON body's shape, counted as it arrives (json-shape.ts). */
  readonly jsonShape: JsonShapeLimits;
  /** How long a body may take to arrive, and go without a byte (body-deadlines.ts). */
  readonly bodyTimeouts: BodyTimeouts;
  /** Serve priced routers without charging when the store is down (default: 503). */
  readonly failOpen: boolean;
  readonly reservationTtlMs: number;
  /** Most active (unrevoked, unexpired) API keys a user may hold. */
  readonly maxKeysPerUser: number;
  /** Serve the Playground web UI under /playground (default true). */
  readonly playground?: boolean;
  readonly logger: FastifyServerOptions['logger'];
  /** How often the learned prompt ratios are sent to and read from the store (ms; default 5000). */
  readonly promptRatioSyncMs?: number;
  /** GET /v1/models leaves out routers that cannot serve now (no ready provider, no fallback). */
  readonly hideUnavailableModels?: boolean;
}

/** A router with a fallback, or a provider live whose breaker lets requests through. */
function canServe(router: RouterRoute, policy: BreakerPolicy): boolean {
  if (router.fallbacks.length > 0) return true;
  const now = Date.now();
  return router.providers.some((provider) => provider.state.ready(now, policy));
}

/** Prompt ratios are shared through the store this often by default. */
const PROMPT_RATIO_SYNC_MS = 5_000;

function billingMetrics(metrics: GatewayMetrics): BillingMetrics {
  return {
    uncovered(router, micros) {
      metrics.uncoveredCost.inc({ router }, microsToNumber(micros));
      metrics.uncoveredRequests.inc({ router });
    },
    usageAnomaly(router, provider, kinds) {
      for (const kind of kinds.split(',')) metrics.usageAnomalies.inc({ router, provider, kind });
    },
  };
}

/**
 * While the gateway drains (app.close()), a request that still arrives on an open connection is
 * refused with 503 in the API's envelope, before anything else runs; those in flight finish.
 * Fastify's own refusal (return503OnClosing) would answer in a shape of its own.
 */
function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (closing) sendError(reply.header('connection', 'close'), errors.shuttingDown());
    else done();
  });
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    logger: deps.logger,
    bodyLimit: deps.bodyLimit,
    // One line per request costs throughput; errors are logged where they happen.
    logController: new LogController({ disableRequestLogging: true }),
    // Requests arriving while the gateway drains get the shutting_down error below instead.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    // Requests no route can be found for, answered in the API's envelope rather than Fastify's.
    frameworkErrors: (error, _request, reply) =>
      sendError(reply, error.code === 'FST_ERR_BAD_URL' ? errors.badUrl() : errors.invalidRequest(error.message)),
    clientErrorHandler,
  });
  refuseWhileClosing(app);
  deps.metrics.trackProviders(function* () {
    const now = Date.now();
    for (const router of deps.routing.table.routers) {
      for (const { spec, state } of router.providers)
        yield {
          router: router.spec.name,
          provider: spec.id,
          inFlight: state.inFlight,
          breaker: state.breaker.state(now),
          healthy: state.healthy,
        };
    }
  });
  // Repeated warnings (the store down, a provider failing) are collapsed: one line a request would flood the log.
  const throttle = new LogThrottle();
  app.addHook('onClose', async () => throttle.close());
  const ratios = new PromptRatioLearner(deps.store.promptRatios, (error) =>
    app.log.warn(`could not share learned prompt ratios: ${error.message}`),
  );
  ratios.start(deps.promptRatioSyncMs ?? PROMPT_RATIO_SYNC_MS);
  app.addHook('onClose', () => ratios.stop());
  const billing = new Billing({
    ledger: deps.store.ledger,
    usage: deps.store.usage,
    now: deps.now,
    failOpen: deps.failOpen,
    reservationTtlMs: deps.reservationTtlMs,
    log: throttle.kindLog(app.log),
    ratios,
    metrics: billingMetrics(deps.metrics),
  });
  // Bodies are JSON; a text/plain body is refused with 415 like any other type.
  app.removeContentTypeParser('text/plain');
  const deadlines = new BodyDeadlines(deps.bodyTimeouts);
  app.addHook('onClose', async () => deadlines.close());
  registerJsonBody(app, { bytes: deps.bodyLimit, shape: deps.jsonShape }, deadlines);
  registerMultipartBody(app, deps.maxAudioBytes, deadlines);
  // The worker thread that reads uploads' durations (audio-probe.ts) stops with the app.
  app.addHook('onClose', () => closeAudioProbe());
  app.setErrorHandler(errorHandler(deps.bodyLimit, throttle));
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.routeNotFound(request.method, request.url)));
  registerAuth(app, deps.keys, deps.now);
  registerHealth(app, deps.routing, deps.metrics, { store: deps.store, failOpen: deps.failOpen });
  registerModels(app, deps.routing, deps.hideUnavailableModels ? (router) => canServe(router, deps.forwarder.breakers.policy) : undefined);
  const pipeline = new RequestPipeline({
    routing: deps.routing,
    forwarder: deps.forwarder,
    outcomes: new OutcomeRecorder(deps.metrics),
    billing,
    responses: deps.store.responses,
    storedLimits: deps.storedResponses,
    log: app.log,
  });
  registerApiSurfaces(app, pipeline);
  registerAdminUsers(app, {
    accounts: deps.accounts,
    ledger: deps.store.ledger,
    now: deps.now,
    maxKeysPerUser: deps.maxKeysPerUser,
    routing: deps.routing,
  });
  registerAdminTeams(app, { accounts: deps.accounts, ledger: deps.store.ledger, now: deps.now });
  registerAdminRouters(app, { catalog: deps.catalog, routing: deps.routing });
  registerAdminProviders(app, { catalog: deps.catalog, routing: deps.routing });
  registerAdminRouting(app, deps.routingLive);
  registerMe(app, { keys: deps.accounts, ledger: deps.store.ledger, now: deps.now, maxKeysPerUser: deps.maxKeysPerUser });
  registerUsage(app, { store: deps.store, routing: deps.routing, now: deps.now });
  if (deps.playground !== false) registerPlayground(app);
  return app;
}
