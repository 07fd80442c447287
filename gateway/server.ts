// Starts the gateway: chooses the store (Redis when a URL is given, memory otherwise), makes
// the bootstrap admin exist, seeds the catalog from the config file, follows catalog changes,
// listens, reloads the file on SIGHUP and drains on SIGTERM/SIGINT.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { loadConfigFile } from './config/config-file.ts';
import type { GatewaySettings } from './config/settings.ts';
import { ensureBootstrapAdmin, seedUsers } from './accounts/bootstrap.ts';
import { CatalogService } from './catalog/catalog-service.ts';
import { KeyCache } from './accounts/key-cache.ts';
import { buildApp } from './http/app.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { UpstreamHttp } from './providers/upstream-http.ts';
import { RoutingState } from './routing/routing-state.ts';
import type { Store } from './store/store.ts';
import { MemoryStore } from './store/memory/memory-store.ts';
import { RedisStore } from './store/redis/redis-store.ts';

/** How long a stopping gateway waits for requests in flight before closing their connections. */
const DRAIN_MS = 10_000;

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly routing: RoutingState;
  readonly store: Store;
  /** Re-reads the configuration file into the catalog; an invalid file changes nothing. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

export async function startGateway(settings: GatewaySettings, env: Readonly<Record<string, string | undefined>>): Promise<RunningGateway> {
  let file = settings.config ? await loadConfigFile(settings.config, env) : undefined;
  const retentionMs = settings.usageRetentionDays * 86_400_000;
  const store: Store = settings.redisUrl
    ? await RedisStore.connect(settings.redisUrl, { usageRetentionMs: retentionMs })
    : new MemoryStore({ usageRetentionMs: retentionMs });
  const adminKey = settings.adminKey ?? (settings.adminKeyFile ? (await readFile(settings.adminKeyFile, 'utf8')).trim() : undefined);
  if (adminKey) await ensureBootstrapAdmin(store, adminKey, new Date());
  if (file) await seedUsers(store, file.users, new Date());

  // A shared store is a round trip away: keys are cached in front of it (see KeyCache).
  const keyCache = settings.redisUrl ? new KeyCache(store) : undefined;
  const catalog = new CatalogService(store);
  const metrics = new GatewayMetrics();
  const routing = new RoutingState(file ? await catalog.seed(file.snapshot) : await catalog.current(), (table) => metrics.setSnapshotVersion(table.version));
  const http = new UpstreamHttp();
  const app = buildApp({
    routing,
    metrics,
    store,
    keys: keyCache ?? store,
    catalog,
    now: Date.now,
    bodyLimit: settings.bodyLimit,
    failOpen: settings.failOpen,
    reservationTtlMs: settings.reservationTtlSeconds * 1000,
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
  const unfollow = catalog.follow(
    (snapshot) => {
      if (snapshot.version !== routing.table.version) routing.load(snapshot);
    },
    (error) => app.log.error(`catalog change not loaded: ${(error as Error).message}`),
  );
  app.addHook('onClose', async () => {
    unfollow();
    keyCache?.close();
    await http.close();
    await store.close();
  });
  const address = await app.listen({ host: settings.host, port: settings.port });
  app.log.info(
    { routers: routing.table.routers.length, snapshot: routing.table.version, store: settings.redisUrl ? 'redis' : 'memory' },
    `Tollgate gateway listening on ${address}`,
  );
  return {
    app,
    url: address,
    routing,
    store,
    async reload() {
      if (!settings.config) return;
      try {
        const next = await loadConfigFile(settings.config, env);
        const snapshot = await catalog.seed(next.snapshot, file?.snapshot);
        await seedUsers(store, next.users, new Date());
        file = next;
        routing.load(snapshot);
        app.log.info({ snapshot: snapshot.version, routers: snapshot.routers.length }, 'configuration reloaded');
      } catch (error) {
        app.log.error(`configuration not reloaded, still serving the previous one: ${(error as Error).message}`);
      }
    },
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
