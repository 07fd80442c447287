// The gateway's services, built once from its settings and store, before any HTTP: the upstream
// client and routing (placers, breakers, health checks, the queue), the key cache, billing with
// its learned prompt ratios, and the request pipeline. The HTTP layer (http/app.ts) is handed
// what it serves with and builds nothing of its own; each route is handed only what it uses.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { MemoryStore } from '../../core/store/memory/memory-store.ts';
import type { RedisStore } from '../../core/store/redis/redis-store.ts';
import type { AccountDirectory } from '../accounts/account-directory.ts';
import { KeyCache } from '../accounts/key-cache.ts';
import { identityParts, type IdentitySetup } from '../identity/identity-parts.ts';
import type { SignIn } from '../identity/sign-in.ts';
import type { TokenCallers } from '../identity/token-callers.ts';
import { Billing, type BillingMetrics } from '../billing/billing.ts';
import { AudioProbe } from '../endpoints/audio-probe.ts';
import { PromptRatioLearner } from '../billing/prompt-ratio-learner.ts';
import type { RoutingCatalog } from '../catalog/catalog-service.ts';
import type { GatewaySettings } from '../config/settings.ts';
import { microsToNumber } from '../metering/cost.ts';
import { LogThrottle } from '../observability/log-throttle.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { OutcomeRecorder } from '../pipeline/request-outcome.ts';
import { RequestPipeline } from '../pipeline/request-pipeline.ts';
import { UpstreamHttp } from '../providers/upstream-http.ts';
import { routingParts } from '../routing/assembly/routing-parts.ts';
import type { RoutingLive } from '../routing/assembly/routing-live.ts';
import type { BreakerPolicy } from '../routing/circuit-breaker.ts';
import type { ForwarderOptions } from '../routing/forwarder.ts';
import type { ServedRouting } from '../routing/served-routing.ts';
import type { Tracing } from '../../core/telemetry/tracing.ts';
import type { UsageLogs } from '../../core/telemetry/usage-logs.ts';

/** What a gateway is built from: its settings, its store and where its routing and accounts come from. */
export interface GatewayParts {
  readonly settings: GatewaySettings;
  readonly store: RedisStore | MemoryStore;
  readonly routing: ServedRouting;
  readonly metrics: GatewayMetrics;
  readonly catalog: RoutingCatalog;
  readonly accounts: AccountDirectory;
  /** OpenTelemetry tracing, when the environment turns it on (core/telemetry/otel-env.ts). */
  readonly tracing?: Tracing | undefined;
  /** Usage records as OTLP logs, when the environment turns them on. */
  readonly usageLogs?: UsageLogs | undefined;
  /** Identity by token, when an identity file is given (--identity-file). */
  readonly identity?: IdentitySetup | undefined;
  /** The audio scan threads' module, when not the gateway's own (tests give one that waits to be told). */
  readonly audioScanWorker?: URL | undefined;
}

export interface GatewayServices extends GatewayParts {
  readonly log: Logger;
  readonly pipeline: RequestPipeline;
  /** How API keys are looked up: a cache in front of a shared store, else the store. */
  readonly keys: KeyCache | RedisStore['accounts'] | MemoryStore['accounts'];
  /** The callers bearer JWTs stand for, when identity by token is configured. */
  readonly tokens: TokenCallers | undefined;
  /** Single sign-on, when the identity file configures it. */
  readonly signIn: SignIn | undefined;
  /** Repeated warnings collapsed (the store down, a provider failing). */
  readonly throttle: LogThrottle;
  /** The breakers' policy, for /v1/models to leave out routers that cannot serve. */
  readonly breakerPolicy: BreakerPolicy;
  /** The live state of routing (GET /v1/admin/routing). */
  routingLive(): Promise<RoutingLive>;
  /** Starts what runs in the background: placement (health checks, workers), prompt-ratio sharing. */
  start(): void;
  /** Stops it, then closes the upstream connections, the key cache and the store. */
  close(): Promise<void>;
}

export function gatewayServices(parts: GatewayParts, log: Logger): GatewayServices {
  const { settings, store, routing, metrics } = parts;
  // A shared store is a round trip away: keys are cached in front of it (see KeyCache).
  const keyCache = settings.redisUrl ? new KeyCache(store.accounts) : undefined;
  const publish = parts.accounts.publishUser?.bind(parts.accounts);
  const identity = parts.identity && identityParts(parts.identity, store, publish, log, Date.now, metrics);
  const http = new UpstreamHttp({
    maxBodyBytes: settings.maxUpstreamBodyBytes,
    maxEventBytes: settings.maxUpstreamEventBytes,
    maxStreamBytes: settings.maxStreamBytes,
    maxStreamMs: settings.maxStreamSeconds * 1000,
  });
  const placement = routingParts({ settings, store, routing, metrics, log, http, tracing: parts.tracing });
  const throttle = new LogThrottle();
  const ratios = new PromptRatioLearner(store.promptRatios, (error) => log.warn(`could not share learned prompt ratios: ${error.message}`));
  const billing = new Billing({
    ledger: store.ledger,
    usage: store.usage,
    now: Date.now,
    failOpen: settings.failOpen,
    reservationTtlMs: settings.reservationTtlSeconds * 1000,
    log: throttle.kindLog(log),
    ratios,
    metrics: billingMetrics(metrics),
    usageLogs: parts.usageLogs,
  });
  // Transcriptions' audio durations, read in worker threads (endpoints/audio-probe.ts).
  const scans = new AudioProbe({
    workers: settings.audioScanWorkers,
    perCaller: settings.audioScansPerCaller,
    workerUrl: parts.audioScanWorker,
    observe: (outcome) => metrics.audioScans.inc({ outcome }),
  });
  const pipeline = new RequestPipeline({
    routing,
    scans,
    forwarder: {
      http,
      options: forwarderOptions(settings),
      placer: placement.placer,
      breakers: placement.health,
      clock: () => performance.now(),
      sleep: (ms, signal) => sleep(ms, undefined, { signal }),
      random: Math.random,
      onRetry: (router, provider) => metrics.retries.inc({ router: router.spec.name, provider: provider.spec.id }),
      onFailure: (router, provider, error) =>
        metrics.upstreamFailures.inc({ router: router.spec.name, provider: provider.spec.id, failure: error.failure }),
    },
    outcomes: new OutcomeRecorder(metrics),
    billing,
    responses: store.responses,
    storedLimits: { bytes: settings.storedResponseMaxBytes, turns: settings.storedResponseMaxTurns },
    log,
    tracing: parts.tracing,
  });
  return {
    ...parts,
    log,
    pipeline,
    keys: keyCache ?? store.accounts,
    tokens: identity?.tokens,
    signIn: identity?.signIn,
    throttle,
    breakerPolicy: placement.health.policy,
    routingLive: () => placement.live(),
    start() {
      placement.start();
      ratios.start(settings.promptRatioSyncSeconds * 1000);
    },
    async close() {
      ratios.stop();
      await scans.close();
      throttle.close();
      await placement.close();
      keyCache?.close();
      identity?.close();
      await http.close();
      await store.close();
      // Last: the spans of the requests that drained are sent.
      await parts.tracing?.shutdown().catch((error: unknown) => log.warn(`could not send the last traces: ${(error as Error).message}`));
      await parts.usageLogs
        ?.shutdown()
        .catch((error: unknown) => log.warn(`could not send the last usage logs: ${(error as Error).message}`));
    },
  };
}

/** How the forwarder fails over, retries and times out, from the process settings. */
function forwarderOptions(settings: GatewaySettings): ForwarderOptions {
  return {
    maxAttempts: settings.maxAttempts,
    retries: settings.retries,
    requestTimeoutMs: settings.requestTimeoutSeconds * 1000,
    backoff: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs, retryAfterMaxMs: settings.retryAfterMaxSeconds * 1000 },
    timeouts: {
      connectSeconds: settings.connectTimeoutSeconds,
      firstByteSeconds: settings.firstByteTimeoutSeconds,
      betweenChunksSeconds: settings.chunkTimeoutSeconds,
    },
  };
}

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
