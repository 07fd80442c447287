// What every gateway has, whatever its routing snapshots come from: the store (Redis when a URL
// is given, memory otherwise), the bootstrap admin, and the composition of its services and app.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { GatewaySettings } from '../config/settings.ts';
import { ensureBootstrapAdmin } from '../accounts/bootstrap.ts';
import { buildApp } from '../http/app.ts';
import { gatewayServices, type GatewayParts } from './gateway-services.ts';
import { MemoryStore } from '../../core/store/memory/memory-store.ts';
import type { RedisStore } from '../../core/store/redis/redis-store.ts';
import { KEY_PREFIX } from '../../core/accounts/api-keys.ts';
import { StartupError, storeProblem } from '../../core/startup-error.ts';
import { DAY_MS } from '../../core/time.ts';
import { DEFAULT_RESPONSE_LIMITS } from '../../core/store/responses.ts';
import { durabilityOf } from '../../core/settings.ts';
import { IdentityConfigError, loadIdentityConfig, type IdentityConfig } from '../identity/identity-config.ts';
import type { IdentitySetup } from '../identity/identity-parts.ts';

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
      credentials: { password: settings.redisPassword, sentinelPassword: settings.redisSentinelPassword },
      durability: durabilityOf(settings),
    });
  } catch (error) {
    throw storeProblem(settings.redisUrl, error, lastError?.message);
  }
}

/** The identity file's content (--identity-file), with a Kubernetes client when an issuer is the API server; undefined without the file. */
export async function identitySetup(
  settings: GatewaySettings,
  env: Readonly<Record<string, string | undefined>>,
): Promise<IdentitySetup | undefined> {
  if (!settings.identityFile) return undefined;
  let config: IdentityConfig;
  try {
    config = await loadIdentityConfig(settings.identityFile);
  } catch (error) {
    if (error instanceof IdentityConfigError) throw new StartupError(`--identity-file ${error.message}`);
    throw error;
  }
  const clientSecret = settings.oidcClientSecret;
  if (!config.issuers.some((issuer) => issuer.kubernetes)) return { config, clientSecret };
  // Loaded only here, as in Kubernetes mode: a gateway that reads no service-account tokens does not pay for it.
  const { kubeClientFor } = await import('../kubernetes/kube-client-for.ts');
  return { config, clientSecret, kube: kubeClientFor(settings, env) };
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

/** The gateway's one logger: made before the store is written to, so the start can say what it waits for. */
export function gatewayLog(settings: GatewaySettings): Logger {
  return pino({ level: settings.logLevel, redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] });
}

/**
 * The gateway's composition root: its settings, store (opened above) and logger, then its
 * services (gateway-services.ts), then HTTP (http/app.ts), not listening yet; closing the app
 * stops the services and closes the store.
 */
export function gatewayApp(parts: GatewayParts, log: Logger): FastifyInstance {
  const { settings } = parts;
  const services = gatewayServices(parts, log);
  const app = buildApp(
    {
      bodyLimit: settings.bodyLimit,
      maxAudioBytes: settings.maxAudioBytes,
      jsonShape: { values: settings.maxJsonValues, depth: settings.maxJsonDepth, keys: settings.maxJsonKeys },
      bodyTimeouts: { totalMs: settings.bodyTimeoutSeconds * 1000, idleMs: settings.bodyIdleSeconds * 1000 },
      connections: { idleMs: settings.idleTimeoutSeconds * 1000, maxConnections: settings.maxConnections },
      failOpen: settings.failOpen,
      maxKeysPerUser: settings.maxKeysPerUser,
      hideUnavailableModels: settings.hideUnavailableModels,
      playground: settings.playground,
    },
    services,
  );
  services.start();
  app.addHook('onClose', () => services.close());
  return app;
}
