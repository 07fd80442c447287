// `tollgate router-worker`: router workers in a process of their own, any number of them across
// the fleet. The routers come from where the gateways take them: the catalog in Redis (file mode;
// the gateways seed it from their configuration file) or the routing ConfigMap (Kubernetes mode).
// /metrics, /healthz and /readyz are served for Prometheus and the kubelet.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { createLog, type Log } from '../core/log.ts';
import { RedisStore } from '../core/store/redis/redis-store.ts';
import { logLayout } from '../core/store/redis/layout-check.ts';
import { readinessDetail } from '../core/store/redis/redis-topology.ts';
import { registerRedisMetrics } from '../core/store/redis/redis-metrics.ts';
import { CatalogService } from '../gateway/catalog/catalog-service.ts';
import type { WorkerSettings } from './settings.ts';
import { QueueMetrics } from '../gateway/observability/queue-metrics.ts';
import { ServedRouting } from '../gateway/routing/served-routing.ts';
import { LATENCY_PROBE_SHARE } from '../gateway/routing/strategies.ts';
import { storeProblem } from '../core/startup-error.ts';
import { followCatalog } from '../gateway/catalog/follow-catalog.ts';
import { workerPassMetrics } from '../gateway/queue/pass-metrics.ts';
import { RouterWorker } from '../gateway/queue/router-worker.ts';
import { WORKER_DEFAULTS } from '../gateway/queue/worker-defaults.ts';
import { tracingFromEnv } from '../core/telemetry/otel-env.ts';
import { startTracing } from '../core/telemetry/tracing.ts';
import { VERSION } from '../core/build-info.ts';

export interface RunningWorkers {
  /** http://host:port of /metrics, /healthz and /readyz. */
  readonly url: string;
  readonly routing: ServedRouting;
  stop(): Promise<void>;
}

export async function startRouterWorkers(
  settings: WorkerSettings,
  env: Readonly<Record<string, string | undefined>>,
  log: Log = createLog(settings.logLevel),
): Promise<RunningWorkers> {
  // Read first: a tracing variable that cannot be used stops the start before anything is opened.
  const tracingSettings = tracingFromEnv(env, 'tollgate-router-worker');
  const tracing = tracingSettings && (await startTracing(tracingSettings, VERSION));
  let store: RedisStore;
  try {
    store = await RedisStore.connect(settings.redisUrl, {
      usageRetentionMs: 0,
      commandTimeoutMs: settings.redisCommandTimeoutMs,
      credentials: { password: settings.redisPassword, sentinelPassword: settings.redisSentinelPassword },
    });
  } catch (error) {
    await tracing?.shutdown();
    throw storeProblem(settings.redisUrl, error);
  }
  logLayout(log, store.layout);
  const routing = new ServedRouting(undefined);
  const stopSource = await followRouters(settings, env, store, routing, log);
  const registry = new Registry();
  registerRedisMetrics(registry, () => store.topology);
  const metrics = new QueueMetrics(registry, { queue: store.routingQueue.statistics, table: () => routing.table, isQueued: () => true });
  const prefix = `${hostname()}-${process.pid}`;
  const workers = Array.from(
    { length: settings.workers },
    (_, i) =>
      new RouterWorker(store.routingQueue.workers, store.routingQueue.workers.reader(WORKER_DEFAULTS.blockMs), () => routing.table, {
        ...WORKER_DEFAULTS,
        claimIdleMs: settings.claimIdleSeconds * 1000,
        consumer: `${prefix}-${i}`,
        routers: settings.routers,
        probeShare: LATENCY_PROBE_SHARE,
        log,
        onPass: workerPassMetrics(metrics),
        tracing,
      }),
  );
  for (const worker of workers) worker.start();
  const server = await listen(
    settings,
    registry,
    () => store.healthy && routing.waiting === undefined,
    () => readinessDetail(store.topology),
  );
  const { port } = server.address() as AddressInfo;
  log.info(
    { workers: settings.workers, routers: settings.routers ?? 'all', mode: settings.kubernetes ? 'kubernetes' : 'file' },
    `Tollgate router workers running; metrics on port ${port}`,
  );
  return {
    url: `http://${settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host}:${port}`,
    routing,
    async stop() {
      await Promise.all(workers.map((worker) => worker.stop()));
      await stopSource();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await store.close();
      // Last: the spans of the last passes are sent.
      await tracing?.shutdown().catch((error: unknown) => log.warn({}, `could not send the last traces: ${(error as Error).message}`));
    },
  };
}

/** Feeds `routing` with the routers the gateways serve; resolves with how to stop. */
async function followRouters(
  settings: WorkerSettings,
  env: Readonly<Record<string, string | undefined>>,
  store: RedisStore,
  routing: ServedRouting,
  log: Log,
): Promise<() => Promise<void>> {
  if (!settings.kubernetes) {
    const catalog = new CatalogService(store.catalog);
    routing.load(await catalog.current());
    const unfollow = followCatalog(catalog, routing, log);
    return async () => unfollow();
  }
  // Loaded only here, as in the gateway: the Kubernetes client is not paid for in file mode.
  const [{ RoutingSource }, { kubeClientFor }] = await Promise.all([
    import('../gateway/kubernetes/routing-source.ts'),
    import('../gateway/kubernetes/kube-client-for.ts'),
  ]);
  const source = new RoutingSource({
    client: kubeClientFor(settings, env),
    namespace: settings.namespace ?? '',
    configMap: settings.routingConfigMap,
    secret: settings.providerKeysSecret,
    // As the gateway routes: a Service's ready endpoints are the replicas whose slots the worker gives.
    load: (_snapshot, routed) => routing.load(routed),
    waitFor: (reason) => routing.waitFor(reason),
    log,
  });
  source.start();
  return () => source.stop();
}

/** `redis`: which Redis, as /readyz says it (the gateways' shape). */
function listen(settings: WorkerSettings, registry: Registry, ready: () => boolean, redis: () => object): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    } else if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (path === '/readyz') {
      const ok = ready();
      response
        .writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: ok ? 'ready' : 'not ready', redis: redis() }));
    } else {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve(server));
  });
}
