// `tollgate operator`: informers on ModelRouter, ModelProvider, GatewayUser, GatewayTeam, Secret and (for ready replica counts) EndpointSlice, a Lease
// for leader election, and the controller that reconciles them while this replica leads.
import { Informer, type InformerEvent } from '../core/kubernetes/informer.ts';
import { endpointSlices, endpointSliceVersion, SERVICE_NAME_LABEL, type EndpointSlice } from '../core/kubernetes/endpoint-slices.ts';
import { createKubeClient, loadKubeConfig, type KubeClient, type KubeObject, type ResourceType } from '../core/kubernetes/kube-client.ts';
import type { Log } from '../core/log.ts';
import { RedisStore } from '../core/store/redis/redis-store.ts';
import { durabilityOf } from '../core/settings.ts';
import { readinessDetail } from '../core/store/redis/redis-topology.ts';
import { logLayout } from '../core/store/redis/layout-check.ts';
import { DAILY_TOTALS_DAYS } from '../core/store/usage-days.ts';
import { Controller } from './controller.ts';
import { startHealthServer } from './health/health-server.ts';
import { OperatorMetrics } from './health/metrics.ts';
import { EventRecorder } from './kube/events.ts';
import { LeaderElector } from './kube/leader-election.ts';
import { GATEWAY_TEAMS, GATEWAY_USERS, MODEL_PROVIDERS, MODEL_ROUTERS, SECRETS, type SecretObject } from './kube/resources.ts';
import { createLog } from '../core/log.ts';
import type { ProviderObject, RouterObject } from './reconcile/routing.ts';
import type { UserObject } from './reconcile/user-state.ts';
import type { TeamObject } from './reconcile/teams.ts';
import { recordAlertEvents } from './reconcile/alert-events.ts';
import type { OperatorSettings } from './settings.ts';
import { DAY_MS } from '../core/time.ts';
import type { Tracer } from '@opentelemetry/api';
import { tracingFromEnv } from '../core/telemetry/otel-env.ts';
import { startTracing } from '../core/telemetry/tracing.ts';
import { VERSION } from '../core/build-info.ts';

export interface RunningOperator {
  /** The port of /healthz, /readyz and /metrics (the one chosen when settings.healthPort is 0). */
  readonly healthPort: number;
  /** Stops leading (releasing the Lease for the other replica), then watching; closes Redis and the health server. */
  stop(): Promise<void>;
}

export async function startOperator(
  settings: OperatorSettings,
  log: Log = createLog(settings.logLevel),
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<RunningOperator> {
  // Read first: a tracing variable that cannot be used stops the start before anything is opened.
  const tracingSettings = tracingFromEnv(env, 'tollgate-operator');
  const tracing = tracingSettings && (await startTracing(tracingSettings, VERSION));
  // The health server answers from the start, so a replica stuck before its caches sync (RBAC,
  // an unreachable API server or Redis) is alive but visibly not ready, with the reason.
  let notReady: string | undefined = 'connecting to Redis';
  let elector: LeaderElector | undefined;
  let redis: (() => object) | undefined;
  const isLeader = () => elector?.isLeader ?? false;
  const metrics = new OperatorMetrics({ isLeader });
  const health = await startHealthServer({
    host: settings.healthHost,
    port: settings.healthPort,
    status: { notReadyReason: () => notReady, isLeader, identity: settings.identity, redis: () => redis?.() },
    metrics,
    log,
  });
  try {
    const running = await startLoops(
      settings,
      log,
      metrics,
      (reason) => (notReady = reason),
      (started) => (elector = started),
      (read) => (redis = read),
      tracing?.tracer,
    );
    if (tracingSettings) log.info({ endpoint: new URL(tracingSettings.url).origin, protocol: tracingSettings.protocol }, 'sending traces');
    return {
      healthPort: health.port,
      async stop() {
        await running.stop();
        await health.close();
        await tracing?.shutdown().catch((error: unknown) => log.warn({ err: error }, 'could not send the last traces'));
      },
    };
  } catch (error) {
    await health.close();
    await tracing?.shutdown();
    throw error;
  }
}

/** Redis, the informers, the controller and, once the caches have synced, the leader election. */
async function startLoops(
  settings: OperatorSettings,
  log: Log,
  metrics: OperatorMetrics,
  setNotReady: (reason: string | undefined) => void,
  setElector: (elector: LeaderElector) => void,
  setRedis: (read: () => object) => void,
  tracer: Tracer | undefined,
): Promise<{ stop(): Promise<void> }> {
  const client = createKubeClient(loadKubeConfig(settings.kube));
  const store = await RedisStore.connect(settings.redisUrl, {
    // The operator only reads usage; records older than the gateways keep are simply not there.
    usageRetentionMs: DAILY_TOTALS_DAYS * DAY_MS,
    onConnectionError: (error) => log.warn({ err: error }, 'Redis connection failed; retrying'),
    credentials: { password: settings.redisPassword, sentinelPassword: settings.redisSentinelPassword },
    // Users, keys and budgets it writes count once the replicas asked for have them.
    durability: durabilityOf(settings),
  });
  logLayout(log, store.layout);
  setRedis(() => readinessDetail(store.topology));
  metrics.trackRedis(() => store.topology);
  // The handlers reach the controller, which reads the informers' caches: built right below.
  let controller: Controller | undefined;
  const watch = <T extends KubeObject>(resource: ResourceType, handler: (event: InformerEvent<T>) => void) =>
    new Informer<T>({ client, resource, namespace: settings.watchNamespace, log, handler: async (event) => handler(event) });
  const routers = watch<RouterObject>(MODEL_ROUTERS, (event) => controller?.routingChanged(event));
  const providers = watch<ProviderObject>(MODEL_PROVIDERS, (event) => controller?.routingChanged(event));
  const users = watch<UserObject>(GATEWAY_USERS, (event) => controller?.userChanged(event));
  const teams = watch<TeamObject>(GATEWAY_TEAMS, (event) => controller?.teamChanged(event));
  const secrets = watch<SecretObject>(SECRETS, (event) => controller?.secretChanged(event));
  const slices = await watchEndpointSlices(client, settings, log, (event) => controller?.endpointsChanged(event));
  const events = new EventRecorder(client, settings.identity, log);
  const target = { namespace: settings.namespace, configMap: settings.routingConfigMap, secret: settings.providerKeysSecret };
  controller = new Controller({
    routing: {
      client,
      routers,
      providers,
      secrets,
      gateways: store.gateways,
      events,
      target,
      log,
      snapshotWritten: () => metrics.snapshotWrites.inc(),
      routingMode: settings.routingMode,
      queueDepth: (router) => store.routingQueue.statistics.depth(router),
      providerHealth: (providers) => store.providerHealth.read(providers),
      endpointSlices: slices,
    },
    users: { client, users, secrets, store, events, log },
    teams: { client, teams, users, store, events, log },
    statusPeriodMs: settings.statusPeriodSeconds * 1000,
    log,
    metrics,
    tracer,
  });

  const informers = [routers, providers, users, teams, secrets];
  setNotReady("waiting for the informers' caches to sync");
  for (const informer of informers) informer.start();
  // Not waited for: without the RBAC to read EndpointSlices (a chart from before serviceRef), only the replica counts are missing.
  slices.start();
  await Promise.all(informers.map((informer) => informer.synced));
  log.info({ watchNamespace: settings.watchNamespace ?? '(all)', identity: settings.identity }, 'caches synced; competing for leadership');
  const elector = startElection(client, settings, controller, log);
  setElector(elector);
  // Ready with warm caches, leader or not: a standby must not be restarted for waiting its turn.
  setNotReady(undefined);

  // Every replica takes part: the consumer group gives each alert to one of them.
  const alertEvents = recordAlertEvents({ alerts: store.alerts, users, teams, events, log, retryAfterMs: 60_000 });
  return {
    async stop() {
      await alertEvents.stop();
      await elector.stop();
      await controller.stopped();
      await Promise.all([...informers, slices].map((informer) => informer.stop()));
      await store.close();
    },
  };
}

/** Renewal and retry paced from the lease duration, so a short lease (tests) stays consistent. */
function startElection(client: KubeClient, settings: OperatorSettings, controller: Controller, log: Log): LeaderElector {
  const leaseMs = settings.leaseDurationSeconds * 1000;
  const elector = new LeaderElector({
    client,
    namespace: settings.leaseNamespace,
    name: settings.leaseName,
    identity: settings.identity,
    leaseDurationSeconds: settings.leaseDurationSeconds,
    renewIntervalMs: Math.floor(leaseMs / 5),
    retryIntervalMs: Math.floor(leaseMs / 7),
    onStartedLeading: (signal) => controller.lead(signal),
    log,
  });
  elector.start();
  return elector;
}

/**
 * Services' EndpointSlices (those the EndpointSlice controller labels with their Service), to
 * count a ModelProvider's ready replicas. The API version is asked first (v1beta1 on 1.20);
 * when the server cannot tell, v1.
 */
async function watchEndpointSlices(
  client: KubeClient,
  settings: OperatorSettings,
  log: Log,
  handler: (event: InformerEvent<EndpointSlice>) => void,
): Promise<Informer<EndpointSlice>> {
  const version = await endpointSliceVersion(client).catch((error: unknown) => {
    log.warn({ err: error }, 'cannot tell which EndpointSlice API the server serves; reading v1');
    return 'v1' as const;
  });
  return new Informer<EndpointSlice>({
    client,
    resource: endpointSlices(version),
    namespace: settings.watchNamespace,
    labelSelector: SERVICE_NAME_LABEL,
    log,
    handler: async (event) => handler(event),
  });
}
