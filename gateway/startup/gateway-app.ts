// What every gateway has, whatever its routing snapshots come from: the store (Redis when a URL
// is given, memory otherwise), the bootstrap admin, and the Fastify app with its forwarder.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { RoutingCatalog } from '../catalog/catalog-service.ts';
import type { AccountDirectory } from '../accounts/account-directory.ts';
import type { GatewaySettings } from '../config/settings.ts';
import { ensureBootstrapAdmin } from '../accounts/bootstrap.ts';
import { KeyCache } from '../accounts/key-cache.ts';
import { buildApp } from '../http/app.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { UpstreamHttp } from '../providers/upstream-http.ts';
import { routingParts } from '../queue/queue-mode.ts';
import type { ForwarderOptions } from '../routing/forwarder.ts';
import type { ServedRouting } from '../routing/served-routing.ts';
import { MemoryStore } from '../../core/store/memory/memory-store.ts';
import type { RedisStore } from '../../core/store/redis/redis-store.ts';
import { KEY_PREFIX } from '../../core/accounts/api-keys.ts';
import { StartupError, storeProblem } from '../../core/startup-error.ts';
import { DAY_MS } from '../../core/time.ts';
import { DEFAULT_RESPONSE_LIMITS } from '../../core/store/responses.ts';

/** The store; a Redis that cannot be reached at start-up, or holds a layout this build does not read, is a StartupError naming why. */
export async function openStore(settings: GatewaySettings): Promise<RedisStore | MemoryStore> {
  const retentionMs = settings.usageRetentionDays * DAY_MS;
  const responseLimits = { bytesPerUser: settings.storedResponsesMaxBytesPerUser, countPerUser: DEFAULT_RESPONSE_LIMITS.countPerUser };
  if (!settings.redisUrl) return new MemoryStore({ usageRetentionMs: retentionMs, responseLimits });
  // Loaded only with --redis-url: a gateway with an in-memory store does not pay for ioredis.
  const { RedisStore } = await import('../../core/store/redis/redis-store.ts');
  let lastError: Error | undefined;
  try {
    return await RedisStore.connect(settings.redisUrl, {
      usageRetentionMs: retentionMs,
      responseLimits,
      leaseRequests: settings.leaseRequests,
      commandTimeoutMs: settings.redisCommandTimeoutMs,
      onConnectionError: (error) => (lastError = error),
    });
  } catch (error) {
    throw storeProblem(settings.redisUrl, error, lastError?.message);
  }
}

/** Makes the bootstrap admin's key (from --admin-key or --admin-key-file) work, if one is given. */
export async function ensureAdminKey(settings: GatewaySettings, store: RedisStore | MemoryStore): Promise<void> {
  const adminKey = settings.adminKey ?? (settings.adminKeyFile ? await readAdminKeyFile(settings.adminKeyFile) : undefined);
  if (!adminKey) return;
  // Checked here too (ensureBootstrapAdmin refuses it as well) so the message names the setting.
  if (!adminKey.startsWith(KEY_PREFIX) || adminKey.length < KEY_PREFIX.length + 32) {
    const from = settings.adminKey ? '--admin-key (TOLLGATE_ADMIN_KEY)' : `the key in --admin-key-file ${settings.adminKeyFile}`;
    throw new StartupError(
      `${from} must start with "${KEY_PREFIX}" and have at least 32 characters after it (got ${adminKey.length} characters in all)`,
    );
  }
  await ensureBootstrapAdmin(store.accounts, adminKey, new Date());
}

async function readAdminKeyFile(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    throw new StartupError(`cannot read --admin-key-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export interface GatewayParts {
  readonly settings: GatewaySettings;
  readonly store: RedisStore | MemoryStore;
  readonly routing: ServedRouting;
  readonly metrics: GatewayMetrics;
  readonly catalog: RoutingCatalog;
  readonly accounts: AccountDirectory;
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

/** The app, not listening yet; closing it closes the upstream connections, the key cache and the store. */
export function gatewayApp({ settings, store, routing, metrics, catalog, accounts }: GatewayParts): FastifyInstance {
  // A shared store is a round trip away: keys are cached in front of it (see KeyCache).
  const keyCache = settings.redisUrl ? new KeyCache(store.accounts) : undefined;
  const http = new UpstreamHttp({ maxBodyBytes: settings.maxUpstreamBodyBytes, maxEventBytes: settings.maxUpstreamEventBytes });
  // The app's logger exists only once the app does: the routing parts log through this.
  const log = {
    debug: (details: object, message: string) => app.log.debug(details, message),
    info: (details: object, message: string) => app.log.info(details, message),
    warn: (details: object, message: string) => app.log.warn(details, message),
    error: (details: object, message: string) => app.log.error(details, message),
  };
  const placement = routingParts({ settings, store, routing, metrics, log, http });
  const app = buildApp({
    routing,
    metrics,
    store,
    keys: keyCache ?? store.accounts,
    catalog,
    accounts,
    routingLive: () => placement.live(),
    now: Date.now,
    bodyLimit: settings.bodyLimit,
    maxAudioBytes: settings.maxAudioBytes,
    storedResponses: { bytes: settings.storedResponseMaxBytes, turns: settings.storedResponseMaxTurns },
    jsonShape: { values: settings.maxJsonValues, depth: settings.maxJsonDepth, keys: settings.maxJsonKeys },
    bodyTimeouts: { totalMs: settings.bodyTimeoutSeconds * 1000, idleMs: settings.bodyIdleSeconds * 1000 },
    failOpen: settings.failOpen,
    reservationTtlMs: settings.reservationTtlSeconds * 1000,
    promptRatioSyncMs: settings.promptRatioSyncSeconds * 1000,
    maxKeysPerUser: settings.maxKeysPerUser,
    hideUnavailableModels: settings.hideUnavailableModels,
    playground: settings.playground,
    logger: { level: settings.logLevel, redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] },
    forwarder: {
      http,
      options: forwarderOptions(settings),
      placer: placement.placer,
      breakers: placement.breakers,
      clock: () => performance.now(),
      sleep: (ms, signal) => sleep(ms, undefined, { signal }),
      random: Math.random,
      onRetry: (router, provider) => metrics.retries.inc({ router: router.spec.name, provider: provider.spec.id }),
      onFailure: (router, provider, error) =>
        metrics.upstreamFailures.inc({ router: router.spec.name, provider: provider.spec.id, failure: error.failure }),
    },
  });
  placement.start();
  app.addHook('onClose', async () => {
    await placement.close();
    keyCache?.close();
    await http.close();
    await store.close();
  });
  return app;
}
