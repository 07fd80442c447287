// The store shared by any number of gateways: one Redis, one client connection per process
// (plus one for catalog change notices), each concern in its own class. Every failure to reach
// Redis surfaces as StoreUnavailableError, so the HTTP layer answers 503 (or fails open).
import { Redis } from 'ioredis';
import type { ProviderSpec } from '../../resources/provider.ts';
import type { RouterSpec } from '../../resources/router.ts';
import type { UserSpec } from '../../resources/user.ts';
import type { ApiKeyRecord, Page, UserRecord } from '../accounts.ts';
import type { Catalog } from '../catalog.ts';
import type { Admission, AdmissionResult, Balance, Settlement, SettleResult } from '../ledger.ts';
import type { Store } from '../store.ts';
import { StoreUnavailableError } from '../store-errors.ts';
import type { UsagePage, UsageQuery, UsageRecord, UsageTotals } from '../usage-log.ts';
import { RedisAccounts } from './redis-accounts.ts';
import { RedisCatalog } from './redis-catalog.ts';
import { RedisChannels } from './redis-channels.ts';
import { RedisGateways, type ServingGateway } from './redis-gateways.ts';
import { LEASES } from './redis-lease.ts';
import { RedisLedger } from './redis-ledger.ts';
import { RedisUsageLog } from './redis-usage-log.ts';
import { unavailable } from './unavailable.ts';

export interface RedisStoreOptions {
  readonly usageRetentionMs: number;
  /** Longest wait between two reconnection attempts; they go on for ever. Default 2000 ms. */
  readonly maxReconnectDelayMs?: number;
  /** How long connect() waits for Redis to answer. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Told of each failed connection attempt (the store keeps retrying by itself). */
  readonly onConnectionError?: (error: Error) => void;
  /** The clock usage retention is measured on. */
  readonly now?: () => number;
  /**
   * Size of the budget and rate-limit leases a gateway takes while a user is far from every
   * limit, in requests (redis-lease.ts); 0 admits every request in Redis. Default 32.
   */
  readonly leaseRequests?: number;
}

export class RedisStore implements Store {
  readonly #client: Redis;
  readonly #accounts: RedisAccounts;
  readonly #catalog: RedisCatalog;
  readonly #channels: RedisChannels;
  readonly #ledger: RedisLedger;
  readonly #usage: RedisUsageLog;
  readonly #gateways: RedisGateways;

  /** Connects and waits until Redis answers; StoreUnavailableError when it does not in time. */
  static async connect(url: string, options: RedisStoreOptions): Promise<RedisStore> {
    const maxDelay = options.maxReconnectDelayMs ?? 2000;
    const client = new Redis(url, {
      // Fail fast: while disconnected, commands are refused at once instead of queued...
      enableOfflineQueue: false,
      // ...and a command in flight when the connection drops fails rather than being sent
      // again after reconnecting: a script that ran but whose reply was lost must not run twice.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 16), maxDelay),
      // No auto-pipelining: ioredis keeps only one auto-pipeline in flight per server, so every
      // admission would wait for the previous batch's round trip (measured: the gateway sat idle
      // 28% of the time). Settlements and usage records are batched by the store itself.
    });
    client.on('error', (error: Error) => options.onConnectionError?.(error));
    try {
      await ready(client, options.connectTimeoutMs ?? 10_000);
    } catch (error) {
      client.disconnect();
      throw error;
    }
    return new RedisStore(client, options);
  }

  constructor(client: Redis, options: RedisStoreOptions) {
    this.#client = client;
    this.#channels = new RedisChannels(client);
    this.#accounts = new RedisAccounts(client, this.#channels);
    this.#catalog = new RedisCatalog(client, this.#channels);
    this.#ledger = new RedisLedger(client, { leaseRequests: options.leaseRequests ?? LEASES.requests, healthy: () => this.healthy });
    this.#usage = new RedisUsageLog(client, { retentionMs: options.usageRetentionMs, now: options.now });
    this.#gateways = new RedisGateways(client);
  }

  get healthy(): boolean {
    return this.#client.status === 'ready';
  }

  createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    return unavailable(() => this.#accounts.createUser(user, now));
  }
  getUser(id: string): Promise<UserRecord | undefined> {
    return unavailable(() => this.#accounts.getUser(id));
  }
  listUsers(after: string | null, limit: number): Promise<Page<UserRecord>> {
    return unavailable(() => this.#accounts.listUsers(after, limit));
  }
  updateUser(user: UserSpec): Promise<UserRecord> {
    // Leases taken under the old budget or limits go back first. Other gateways' leases close by
    // themselves within LEASES.openMs.
    return unavailable(() => this.#ledger.closeLeases(user.id).then(() => this.#accounts.updateUser(user)));
  }
  deleteUser(id: string): Promise<boolean> {
    return unavailable(() => this.#ledger.closeLeases(id).then(() => this.#accounts.deleteUser(id)));
  }
  addKey(key: ApiKeyRecord, maxActive?: number): Promise<void> {
    return unavailable(() => this.#accounts.addKey(key, maxActive));
  }
  listKeys(userId: string): Promise<ApiKeyRecord[]> {
    return unavailable(() => this.#accounts.listKeys(userId));
  }
  revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    return unavailable(() => this.#accounts.revokeKey(userId, keyId, now));
  }
  findKey(hash: string): Promise<{ key: ApiKeyRecord; user: UserRecord } | undefined> {
    return unavailable(() => this.#accounts.findKey(hash));
  }

  readCatalog(): Promise<Catalog> {
    return unavailable(() => this.#catalog.readCatalog());
  }
  writeCatalog(expectedRevision: number, next: { routers: RouterSpec[]; providers: ProviderSpec[] }): Promise<number | 'conflict'> {
    return unavailable(() => this.#ledger.closeLeases(null).then(() => this.#catalog.writeCatalog(expectedRevision, next)));
  }
  onCatalogChange(listener: () => void): () => void {
    return this.#catalog.onCatalogChange(listener);
  }
  onAccountChange(listener: (userId: string | null) => void): () => void {
    return this.#accounts.onAccountChange(listener);
  }

  admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    return unavailable(() => this.#ledger.admit(userId, admission));
  }
  settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    return unavailable(() => this.#ledger.settle(userId, settlement));
  }
  balance(userId: string, now: number): Promise<Balance> {
    return unavailable(() => this.#ledger.balance(userId, now));
  }

  append(record: UsageRecord): Promise<void> {
    return unavailable(() => this.#usage.append(record));
  }
  query(userId: string, query: UsageQuery): Promise<UsagePage> {
    return unavailable(() => this.#usage.query(userId, query));
  }
  dailyTotals(subject: { user: string } | { router: string }, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>> {
    return unavailable(() => this.#usage.dailyTotals(subject, fromDay, toDay));
  }

  /** Kubernetes mode: says which routing snapshot version this pod serves, for `ttlMs` (tg:gateways:<pod>). */
  reportServing(pod: string, version: string, ttlMs: number, at = new Date()): Promise<void> {
    return unavailable(() => this.#gateways.report(pod, version, ttlMs, at));
  }
  /** Removes a pod's report, when it stops serving. */
  forgetServing(pod: string): Promise<void> {
    return unavailable(() => this.#gateways.forget(pod));
  }
  /** Every gateway pod whose report has not expired, by pod name. */
  servingGateways(): Promise<ServingGateway[]> {
    return unavailable(() => this.#gateways.list());
  }

  async close(): Promise<void> {
    await this.#ledger.closeLeases(null);
    this.#channels.close();
    if (this.#client.status === 'ready') {
      try {
        await this.#client.quit();
        return;
      } catch {
        // fall through: drop the connection
      }
    }
    this.#client.disconnect();
  }
}

/** Resolves at the client's first 'ready'; rejects when that takes longer than `timeoutMs`. */
function ready(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new StoreUnavailableError(`the store (Redis) did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}
