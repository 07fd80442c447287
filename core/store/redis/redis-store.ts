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
import { RedisHealth } from './redis-health.ts';
import { BUDGET_LEASES } from './redis-budget-lease.ts';
import { RedisLedger } from './redis-ledger.ts';
import { RedisUsageLog } from './redis-usage-log.ts';
import { RedisPromptRatios } from './redis-prompt-ratios.ts';
import type { RatioCounts } from '../prompt-ratios.ts';
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
  /**
   * A command Redis has not answered within this time fails (StoreUnavailableError), and the
   * store refuses at once until Redis answers a probe again. Default 1000 ms.
   */
  readonly commandTimeoutMs?: number;
  /** How often the store checks, in the background, that Redis answers and still holds what was seeded. Default 1000 ms. */
  readonly probeIntervalMs?: number;
}

export class RedisStore implements Store {
  readonly #client: Redis;
  readonly #accounts: RedisAccounts;
  readonly #catalog: RedisCatalog;
  readonly #channels: RedisChannels;
  readonly #ledger: RedisLedger;
  readonly #usage: RedisUsageLog;
  readonly #ratios: RedisPromptRatios;
  readonly #gateways: RedisGateways;
  readonly #health: RedisHealth;
  readonly #timedOut = () => this.#health.timedOut();

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
      // A Redis that keeps the connection open but answers nothing (stopped, stuck, or behind a
      // network that drops packets) must not hold requests: a command fails after this long.
      commandTimeout: options.commandTimeoutMs ?? 1000,
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
    this.#health = new RedisHealth(client, options.probeIntervalMs ?? 1000);
    this.#channels = new RedisChannels(client);
    this.#accounts = new RedisAccounts(client, this.#channels);
    this.#catalog = new RedisCatalog(client, this.#channels);
    this.#ledger = new RedisLedger(client, { leaseRequests: options.leaseRequests ?? BUDGET_LEASES.requests, healthy: () => this.healthy });
    this.#usage = new RedisUsageLog(client, { retentionMs: options.usageRetentionMs, now: options.now });
    this.#ratios = new RedisPromptRatios(client);
    this.#gateways = new RedisGateways(client);
  }

  /** Connected, and Redis answers (a command that timed out says no until a probe is answered). */
  get healthy(): boolean {
    return this.#client.status === 'ready' && this.#health.answering;
  }

  markSeeded(): Promise<void> {
    return this.#call(() => this.#health.markSeeded());
  }
  onDataLost(listener: () => void): () => void {
    return this.#health.onDataLost(listener);
  }

  /**
   * Every call to Redis goes through here. While Redis does not answer, calls are refused at once
   * rather than each waiting out the command timeout.
   */
  #call<T>(call: () => Promise<T>): Promise<T> {
    if (!this.#health.answering) return Promise.reject(new StoreUnavailableError('the store (Redis) does not answer'));
    return unavailable(call, this.#timedOut);
  }

  createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    return this.#call(() => this.#accounts.createUser(user, now));
  }
  getUser(id: string): Promise<UserRecord | undefined> {
    return this.#call(() => this.#accounts.getUser(id));
  }
  listUsers(after: string | null, limit: number): Promise<Page<UserRecord>> {
    return this.#call(() => this.#accounts.listUsers(after, limit));
  }
  updateUser(user: UserSpec): Promise<UserRecord> {
    // Leases taken under the old budget or limits go back first. Other gateways' leases close by
    // themselves within BUDGET_LEASES.openMs.
    return this.#call(() => this.#ledger.closeLeases(user.id).then(() => this.#accounts.updateUser(user)));
  }
  deleteUser(id: string): Promise<boolean> {
    return this.#call(() => this.#ledger.closeLeases(id).then(() => this.#accounts.deleteUser(id)));
  }
  addKey(key: ApiKeyRecord, maxActive?: number): Promise<void> {
    return this.#call(() => this.#accounts.addKey(key, maxActive));
  }
  listKeys(userId: string): Promise<ApiKeyRecord[]> {
    return this.#call(() => this.#accounts.listKeys(userId));
  }
  revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    return this.#call(() => this.#accounts.revokeKey(userId, keyId, now));
  }
  findKey(hash: string): Promise<{ key: ApiKeyRecord; user: UserRecord } | undefined> {
    return this.#call(() => this.#accounts.findKey(hash));
  }

  readCatalog(): Promise<Catalog> {
    return this.#call(() => this.#catalog.readCatalog());
  }
  writeCatalog(expectedRevision: number, next: { routers: RouterSpec[]; providers: ProviderSpec[] }): Promise<number | 'conflict'> {
    return this.#call(() => this.#ledger.closeLeases(null).then(() => this.#catalog.writeCatalog(expectedRevision, next)));
  }
  onCatalogChange(listener: () => void): () => void {
    return this.#catalog.onCatalogChange(listener);
  }
  onAccountChange(listener: (userId: string | null) => void): () => void {
    return this.#accounts.onAccountChange(listener);
  }

  admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    return this.#call(() => this.#ledger.admit(userId, admission));
  }
  settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    // Not refused here while Redis does not answer: the ledger first forgets the request's lease
    // hold, then refuses (see RedisLedger.settle).
    return unavailable(() => this.#ledger.settle(userId, settlement), this.#timedOut);
  }
  balance(userId: string, now: number): Promise<Balance> {
    return this.#call(() => this.#ledger.balance(userId, now));
  }

  append(record: UsageRecord): Promise<void> {
    return this.#call(() => this.#usage.append(record));
  }
  query(userId: string, query: UsageQuery): Promise<UsagePage> {
    return this.#call(() => this.#usage.query(userId, query));
  }
  dailyTotals(subject: { user: string } | { router: string }, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>> {
    return this.#call(() => this.#usage.dailyTotals(subject, fromDay, toDay));
  }

  addPromptRatios(counts: RatioCounts): Promise<void> {
    return unavailable(() => this.#ratios.addPromptRatios(counts));
  }
  promptRatios(): Promise<RatioCounts> {
    return unavailable(() => this.#ratios.promptRatios());
  }

  /** Kubernetes mode: says which routing snapshot version this pod serves, for `ttlMs` (tg:gateways:<pod>). */
  reportServing(pod: string, version: string, ttlMs: number, at = new Date()): Promise<void> {
    return this.#call(() => this.#gateways.report(pod, version, ttlMs, at));
  }
  /** Removes a pod's report, when it stops serving. */
  forgetServing(pod: string): Promise<void> {
    return this.#call(() => this.#gateways.forget(pod));
  }
  /** Every gateway pod whose report has not expired, by pod name. */
  servingGateways(): Promise<ServingGateway[]> {
    return this.#call(() => this.#gateways.list());
  }

  async close(): Promise<void> {
    this.#health.close();
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
