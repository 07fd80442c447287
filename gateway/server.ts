// Starts the gateway: opens the store, makes the bootstrap admin exist (again, should the store
// lose its data), takes its routing snapshots from their source (the config file and the
// catalog, or in Kubernetes mode the routing ConfigMap and the keys Secret), listens, reloads on
// SIGHUP and drains on SIGTERM/SIGINT.
import type { FastifyInstance } from 'fastify';
import type { GatewaySettings } from './config/settings.ts';
import { deliverAlerts } from './alerts/alert-delivery.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { BudgetStanding } from './observability/budget-standing.ts';
import { ServedRouting } from './routing/served-routing.ts';
import type { Store } from '../core/store/store.ts';
import { ensureAdminKey, gatewayApp, gatewayLog, identitySetup, openStore } from './startup/gateway-app.ts';
import { untilReplicasConfirm } from './startup/replicas-at-start.ts';
import { fileSource } from './startup/file-source.ts';
import type { SnapshotSource } from './startup/snapshot-source.ts';
import { reseedOnDataLoss } from './startup/reseed.ts';
import { listenProblem, StartupError } from '../core/startup-error.ts';
import { loadEncoding } from './metering/o200k.ts';
import { logLayout } from '../core/store/redis/layout-check.ts';
import { logsFromEnv, tracingFromEnv } from '../core/telemetry/otel-env.ts';
import { startUsageLogs } from '../core/telemetry/usage-logs.ts';
import { startTracing, type Tracing } from '../core/telemetry/tracing.ts';
import { VERSION } from '../core/build-info.ts';
import { maskUrl } from './providers/secrets.ts';

/** How long a stopping gateway waits for requests in flight before closing their connections. */
const DRAIN_MS = 10_000;
/** How long the alert webhook has to answer one POST. */
const ALERT_WEBHOOK_TIMEOUT_MS = 10_000;

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly routing: ServedRouting;
  readonly store: Store;
  /** Re-reads the configuration file into the catalog; an invalid file changes nothing. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

/** What a gateway may be started with besides its settings: tests swap parts in. */
export interface StartOptions {
  /** The audio scan threads' module (endpoints/audio-probe.ts): tests give one that waits to be told. */
  readonly audioScanWorker?: URL | undefined;
}

export async function startGateway(
  settings: GatewaySettings,
  env: Readonly<Record<string, string | undefined>>,
  options: StartOptions = {},
): Promise<RunningGateway> {
  // Read first: a tracing variable that cannot be used stops the start before anything is opened.
  const tracingSettings = tracingFromEnv(env, 'tollgate-gateway');
  const tracing: Tracing | undefined = tracingSettings && (await startTracing(tracingSettings, VERSION));
  const logsSettings = logsFromEnv(env, 'tollgate-gateway');
  const usageLogs = logsSettings && (await startUsageLogs(logsSettings, VERSION));
  const identity = await identitySetup(settings, env);
  const store = await openStore(settings);
  const log = gatewayLog(settings);
  let source: SnapshotSource;
  try {
    // With the failover loss bound, made again until the replicas confirm them (replicas-at-start.ts).
    source = await untilReplicasConfirm(
      async () => {
        await ensureAdminKey(settings, store);
        if (!settings.kubernetes) return fileSource(settings, store, env);
        // The settings require Redis in Kubernetes mode: the operator reads the reports there.
        if (!settings.redisUrl) throw new StartupError('Kubernetes mode needs --redis-url');
        // Loaded only here: the Kubernetes client (@kubernetes/client-node and what it pulls in,
        // tens of MB of heap) is not needed, nor paid for, by a gateway run from a file.
        const { kubernetesSource } = await import('./startup/kubernetes-source.ts');
        return kubernetesSource(settings, store, env);
      },
      { boundMs: settings.redisSettleRetrySeconds * 1000, waiting: (message) => log.warn(message) },
    );
    await store.markSeeded();
  } catch (error) {
    await store.close();
    await tracing?.shutdown();
    await usageLogs?.shutdown();
    throw error;
  }

  const metrics = new GatewayMetrics();
  metrics.trackStore(() => ({ store: settings.redisUrl ? 'redis' : 'memory', healthy: store.healthy }));
  if ('topology' in store) metrics.trackRedis(() => store.topology);
  const budgets = new BudgetStanding();
  metrics.trackBudgets(() => budgets.current());
  const routing = new ServedRouting(source.initial, (table) => metrics.setSnapshotVersion(table.version));
  const app = gatewayApp(
    {
      settings,
      store,
      routing,
      metrics,
      catalog: source.catalog,
      accounts: source.accounts,
      tracing,
      usageLogs,
      identity,
      audioScanWorker: options.audioScanWorker,
    },
    log,
  );
  if ('layout' in store) logLayout(app.log, store.layout);
  // Registered after the app's own hook, so it runs first: the source stops before the store closes.
  app.addHook('onClose', () => source.stop());
  source.start({ routing, metrics, log: app.log });
  const stopReseeding = reseedOnDataLoss(
    store,
    async () => {
      await ensureAdminKey(settings, store);
      await source.reseed();
    },
    app.log,
  );
  app.addHook('onClose', async () => stopReseeding());
  const alerts = deliverAlerts(store.alerts, {
    webhook: settings.alertWebhookUrl
      ? { url: settings.alertWebhookUrl, secret: settings.alertWebhookSecret, timeoutMs: ALERT_WEBHOOK_TIMEOUT_MS }
      : undefined,
    attempts: settings.alertWebhookAttempts,
    backoff: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs, retryAfterMaxMs: 0 },
    retryAfterMs: settings.alertRetrySeconds * 1000,
    metrics: {
      delivered: (alert) => {
        metrics.budgetAlerts.inc({ level: alert.level, percent: String(alert.percent) });
        budgets.reached(alert);
      },
      failed: () => metrics.alertDeliveryFailures.inc(),
    },
    log: app.log,
  });
  // Registered after the app's own hook, so it runs first: delivery stops before the store closes.
  app.addHook('onClose', () => alerts.stop());
  // Before listening: reading the o200k rank table and building its index takes about 12 ms.
  loadEncoding();
  let address: string;
  try {
    address = await app.listen({ host: settings.host, port: settings.port, backlog: settings.listenBacklog });
  } catch (error) {
    await app.close();
    throw listenProblem(error as NodeJS.ErrnoException, settings.host, settings.port) ?? error;
  }
  app.log.info(
    {
      routers: routing.table.routers.length,
      snapshot: routing.table.version,
      store: settings.redisUrl ? 'redis' : 'memory',
      mode: settings.kubernetes ? 'kubernetes' : 'file',
    },
    `Tollgate gateway listening on ${address}${tracingSettings ? `; traces to ${maskUrl(tracingSettings.url)} (${tracingSettings.protocol})` : ''}${logsSettings ? `; usage logs to ${maskUrl(logsSettings.url)} (${logsSettings.protocol})` : ''}`,
  );
  return {
    app,
    url: address,
    routing,
    store,
    reload: () => source.reload(),
    async close() {
      // Drain: requests in flight finish; after DRAIN_MS whatever is left (a connection that
      // never sent a request would otherwise hold close() until its headers timeout) is closed.
      const force = setTimeout(() => app.server.closeAllConnections(), DRAIN_MS);
      force.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(force);
      }
    },
  };
}
