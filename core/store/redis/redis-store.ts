// The store shared by any number of gateways: one Redis, one client connection per process
// (plus one for change notices), each part in its own class. Every call of a part goes through
// one gate: refused at once while Redis does not answer, and every failure to reach Redis
// surfaces as StoreUnavailableError, so the HTTP layer answers 503 (or fails open). Opening it
// checks the layout's version first (layout-check.ts): every process opens the store here.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { clientArguments, clusterArguments, redisTarget, type RedisCredentials, type RedisTarget } from './redis-target.ts';
import { duplicateClient, type RedisClient } from './redis-client.ts';
import { RedisTopology, type RedisTopologyView } from './redis-topology.ts';
import type { AccountStore } from '../accounts.ts';
import type { CatalogStore } from '../catalog.ts';
import type { GatewayReports } from '../gateway-reports.ts';
import type { Ledger } from '../ledger.ts';
import type { PromptRatioStore } from '../prompt-ratios.ts';
import type { Store } from '../store.ts';
import { StoreUnavailableError } from '../store-errors.ts';
import type { UsageLog } from '../usage-log.ts';
import { RedisAccounts } from './redis-accounts.ts';
import { RedisCatalog } from './redis-catalog.ts';
import { RedisChannels } from './redis-channels.ts';
import { RedisGateways } from './redis-gateways.ts';
import { RedisHealth } from './redis-health.ts';
import { BUDGET_LEASES } from './redis-budget-lease.ts';
import { RedisBudgetAlerts } from './redis-budget-alerts.ts';
import { RedisResponses } from './redis-responses.ts';
import type { ResponseLimits, ResponseStore } from '../responses.ts';
import type { BudgetAlerts } from '../budget-alerts.ts';
import { RedisLedger } from './redis-ledger.ts';
import { RedisUsageLog } from './redis-usage-log.ts';
import { RedisPromptRatios } from './redis-prompt-ratios.ts';
import { RedisSignIns } from './redis-sign-ins.ts';
import type { SignInStore } from '../sign-ins.ts';
import { RedisQueueGateways } from './redis-queue-gateways.ts';
import { RedisQueueStatistics } from './redis-queue-statistics.ts';
import { RedisQueueWorkers } from './redis-queue-workers.ts';
import { queueKeyNames } from './queue-keys.ts';
import type { RoutingQueue } from '../routing-queue.ts';
import type { PrefixIndexLimits, PrefixIndexStore } from '../prefix-index.ts';
import { RedisPrefixIndex } from './redis-prefix-index.ts';
import { RedisProviderHealth } from './redis-provider-health.ts';
import type { ProviderHealthStore } from '../provider-health.ts';
import { RedisEngineSignals } from './redis-engine-signals.ts';
import type { EngineSignalStore } from '../engine-signals.ts';
import { unavailable } from './unavailable.ts';
import { NO_DURABILITY, ReplicaConfirmation, type Durability, type DurabilityView } from './redis-durability.ts';
import { checkLayout, type LayoutFound } from './layout-check.ts';
import { refuseCluster } from './cluster-check.ts';

/** How often the primary's replicas are read (INFO replication), for /readyz and /metrics. */
const TOPOLOGY_READ_MS = 5000;

export interface RedisStoreOptions {
  readonly usageRetentionMs: number;
  /** What one user's stored responses may take in all (store/responses.ts). */
  readonly responseLimits?: ResponseLimits;
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
  /** Bounds of the prefix index (core/store/prefix-index.ts); default DEFAULT_PREFIX_INDEX_LIMITS. */
  readonly prefixIndex?: PrefixIndexLimits;
  /** How often the store checks, in the background, that Redis answers and still holds what was seeded. Default 1000 ms. */
  readonly probeIntervalMs?: number;
  /** Passwords from the environment (a Secret), for a URL that holds none (redis-target.ts). */
  readonly credentials?: RedisCredentials;
  /**
   * The bound on what a failover may lose (redis-durability.ts): ledger batches and user, key and
   * team changes count once this many replicas have them. Default off (NO_DURABILITY).
   */
  readonly durability?: Durability;
}

/** The account changes confirmed on the replicas with durability on: every write of money or access. */
const ACCOUNT_WRITES = [
  'createUser',
  'updateUser',
  'deleteUser',
  'addKey',
  'updateKey',
  'revokeKey',
  'createTeam',
  'updateTeam',
  'deleteTeam',
] as const satisfies readonly (keyof AccountStore)[];

/** How long a store that closes waits for settlements not yet confirmed on the replicas. */
const CLOSE_DRAIN_MS = 5000;

export class RedisStore implements Store {
  readonly accounts: AccountStore;
  readonly catalog: CatalogStore;
  readonly ledger: Ledger;
  readonly alerts: BudgetAlerts;
  readonly responses: ResponseStore;
  readonly usage: UsageLog;
  readonly promptRatios: PromptRatioStore;
  readonly signIns: SignInStore;
  readonly gateways: GatewayReports;
  readonly providerHealth: ProviderHealthStore;
  readonly engineSignals: EngineSignalStore;
  readonly prefixIndex: PrefixIndexStore;
  /**
   * Queue mode's queue, one part a role (routing-queue.ts), all on one connection of their own.
   * Not gated: its users decide what an outage means (fall back, refuse, retry).
   */
  readonly routingQueue: RoutingQueue;
  /** The layout's version found when the store was opened (the process logs it: logLayout). */
  readonly layout: LayoutFound;
  readonly #client: RedisClient;
  /** With durability on: the replicas' confirmation, on a connection of its own (its WAITs block it). */
  readonly #confirmation: ReplicaConfirmation | undefined;
  readonly #blocking = new Set<RedisClient>();
  readonly #queueClient: RedisClient;
  readonly #commandTimeoutMs: number | undefined;
  readonly #channels: RedisChannels;
  readonly #ledger: RedisLedger;
  readonly #health: RedisHealth;
  readonly #timedOut = () => this.#health.timedOut();
  readonly #topology: RedisTopology;

  /**
   * Connects, waits until Redis answers (StoreUnavailableError when it does not in time), and
   * checks the layout's version: RedisLayoutError when this build does not read the one found.
   */
  static async connect(url: string, options: RedisStoreOptions): Promise<RedisStore> {
    const maxDelay = options.maxReconnectDelayMs ?? 2000;
    const target = redisTarget(url, options.credentials);
    const connectionOptions: RedisOptions = {
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
      // Sentinel mode: the Sentinels are asked for the primary at each (re)connection, as often.
      sentinelRetryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 16), maxDelay),
    };
    let client: RedisClient;
    if (target.mode === 'cluster') client = new Cluster(...clusterArguments(target, connectionOptions));
    else {
      const args = clientArguments(target, connectionOptions);
      client = args.length === 2 ? new Redis(args[0], args[1]) : new Redis(args[0]);
    }
    client.on('error', (error: Error) => options.onConnectionError?.(error));
    let layout: LayoutFound;
    try {
      await ready(client, options.connectTimeoutMs ?? 10_000);
      // A cluster node named as one Redis would answer MOVED to part of the writes.
      if (!client.isCluster) await unavailable(() => refuseCluster(client as Redis));
      layout = await unavailable(() => checkLayout(client));
    } catch (error) {
      client.disconnect();
      throw error;
    }
    const store = new RedisStore(client, options, layout, target.mode);
    // The ledger's own connection (durability on) takes its first writes at once: the bootstrap admin's key.
    if (store.#confirmation) {
      try {
        await ready(store.#confirmation.connection, options.connectTimeoutMs ?? 10_000);
      } catch (error) {
        await store.close();
        throw error;
      }
    }
    return store;
  }

  constructor(client: RedisClient, options: RedisStoreOptions, layout: LayoutFound, mode: RedisTarget['mode'] = 'single') {
    this.#client = client;
    this.#topology = new RedisTopology(client, mode, TOPOLOGY_READ_MS);
    this.layout = layout;
    this.#commandTimeoutMs = options.commandTimeoutMs;
    this.#health = new RedisHealth(client, options.probeIntervalMs ?? 1000);
    this.#channels = new RedisChannels(client);
    const durability = options.durability ?? NO_DURABILITY;
    if (durability.replicas > 0) {
      const connection = duplicateClient(client, { commandTimeout: durability.timeoutMs + (options.commandTimeoutMs ?? 1000) });
      connection.on('error', () => {}); // the shared client reports outages
      this.#confirmation = new ReplicaConfirmation(connection, durability);
    }
    const confirmation = this.#confirmation;
    const ledger = new RedisLedger(client, {
      // A lease admits without Redis: with durability on, each admission is confirmed instead. On
      // a cluster, a command sent again (TRYAGAIN, ASK or MOVED while slots move or fail over) may
      // overtake a later one, and a lease's successive changes of its hold must land in order
      // (measured: resharding under load left given-back leases' holds behind): none either.
      leaseRequests: confirmation || client.isCluster ? 0 : (options.leaseRequests ?? BUDGET_LEASES.requests),
      healthy: () => this.healthy,
      ...(confirmation && { confirmation }),
    });
    this.#ledger = ledger;
    const gate: Gate = (call) => this.#call(call);
    // Leases taken under a user's old budget or limits, or under old prices, go back before the
    // change. Other gateways' leases close by themselves within BUDGET_LEASES.openMs.
    const closeLeases = (subject: string) => ledger.closeLeases(subject);
    const accounts = new RedisAccounts(client, this.#channels, closeLeases);
    // With durability on, changes go on the confirmation's connection, followed by its WAIT (which
    // covers only the writes of the connection it is sent on).
    this.accounts = gated(
      accounts,
      gate,
      ['onAccountChange'],
      confirmation && {
        part: new RedisAccounts(confirmation.connection, this.#channels, closeLeases),
        gate: (call) =>
          this.#call(async () => {
            confirmation.refuseWhileBehind('change');
            const result = await call();
            await confirmation.confirm().catch((error: unknown) => {
              confirmation.count('change');
              throw error;
            });
            return result;
          }),
        methods: ACCOUNT_WRITES,
      },
    );
    this.catalog = gated(new RedisCatalog(client, this.#channels, () => ledger.closeLeases(null)), gate, ['onCatalogChange']);
    this.ledger = {
      admit: (userId, admission) => this.#call(() => ledger.admit(userId, admission)),
      // Not refused here while Redis does not answer: the ledger first forgets the request's
      // lease hold, then refuses (see RedisLedger.settle).
      settle: (userId, settlement) => unavailable(() => ledger.settle(userId, settlement), this.#timedOut),
      balance: (subject, now, owner) => this.#call(() => ledger.balance(subject, now, owner)),
    };
    // Its readers block on connections of their own, and retry by themselves: not gated.
    this.alerts = new RedisBudgetAlerts(client);
    this.responses = gated(new RedisResponses(client, options.usageRetentionMs, options.responseLimits), gate);
    this.usage = gated(new RedisUsageLog(client, { retentionMs: options.usageRetentionMs, now: options.now }), gate);
    // Shared every few seconds, off the request path: tried even while a probe is pending.
    this.promptRatios = gated(new RedisPromptRatios(client), (call) => unavailable(call));
    this.gateways = gated(new RedisGateways(client), gate);
    this.signIns = gated(new RedisSignIns(client, options.now), gate);
    // The queue's keys and provider health's: on a cluster a router's queue and its providers in one slot.
    const queueNames = queueKeyNames(mode === 'cluster' ? 'cluster' : 'one');
    this.providerHealth = gated(new RedisProviderHealth(client, this.#channels, queueNames), gate, ['onNotice']);
    // A request's count of what it sent is never refused nor awaited: `sent` goes direct.
    this.engineSignals = gated(new RedisEngineSignals(client), gate, ['sent']);
    this.prefixIndex = gated(new RedisPrefixIndex(client, options.prefixIndex), gate);
    // A connection of its own: every script defined on a client is copied onto each pipeline and
    // transaction it makes (ioredis), so the queue's seven scripts on the shared client would slow
    // the ledger's and the usage log's batches, queue mode or not (measured: about 10% fewer
    // requests per second on the Redis path).
    this.#queueClient = duplicateClient(client);
    this.#queueClient.on('error', () => {}); // the shared client reports outages
    this.routingQueue = {
      gateways: new RedisQueueGateways(this.#queueClient, this.#channels, queueNames),
      workers: new RedisQueueWorkers(this.#queueClient, this.#channels, queueNames, (blockMs) => this.blockingConnection(blockMs)),
      statistics: new RedisQueueStatistics(this.#queueClient, queueNames),
    };
  }

  /**
   * A connection of its own for a command that blocks up to `blockMs` (a router worker's
   * XREADGROUP), which fails rather than hangs: after the block plus the command timeout, or at
   * once while disconnected (the caller retries). Closed with the store.
   */
  blockingConnection(blockMs: number): RedisClient {
    const connection = duplicateClient(this.#client, { commandTimeout: blockMs + (this.#commandTimeoutMs ?? 1000) });
    connection.on('error', () => {}); // the shared client reports outages
    this.#blocking.add(connection);
    return connection;
  }

  /** The mode, the primary connected to and its replicas (read every TOPOLOGY_READ_MS): /readyz and /metrics show it. */
  get topology(): RedisTopologyView {
    const view = this.#topology.view;
    const confirmation = this.#confirmation;
    if (confirmation === undefined) return view;
    // The failover loss bound: what the replicas did not confirm, and the settlements still being sent.
    const durability: DurabilityView = {
      waitReplicas: confirmation.settings.replicas,
      unconfirmed: confirmation.counts,
      pendingSettlements: this.#ledger.pendingSettlements,
    };
    return { ...view, durability };
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

  async close(): Promise<void> {
    this.#health.close();
    this.#topology.close();
    await this.#ledger.closeLeases(null);
    await this.#ledger.drain(CLOSE_DRAIN_MS);
    this.#channels.close();
    this.#confirmation?.close();
    this.#confirmation?.connection.disconnect();
    for (const connection of this.#blocking) connection.disconnect();
    this.#queueClient.disconnect();
    if (this.#client.status === 'ready') {
      try {
        await this.#client.quit();
      } catch {
        // fall through: drop the connection
      }
    }
    // Also after QUIT: in Sentinel mode only disconnect() stops the connections to the Sentinels
    // that watch for a failover (ioredis' failover detector), which would otherwise keep retrying.
    this.#client.disconnect();
  }
}

/** How a part's calls reach Redis: refused at once while it does not answer, failures as StoreUnavailableError. */
type Gate = <T>(call: () => Promise<T>) => Promise<T>;

/**
 * The part with each of its methods called through `gate`, except `direct` ones (subscriptions,
 * which return at once), and `other.methods`, taken from another instance of the part (on another
 * connection) through `other.gate`. Only the methods of the part's contract are reachable through the type.
 */
function gated<T extends object>(
  part: T,
  gate: Gate,
  direct: readonly (keyof T & string)[] = [],
  other?: { readonly part: T; readonly gate: Gate; readonly methods: readonly (keyof T & string)[] },
): T {
  const out: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(part))) {
    const method = (part as Record<string, unknown>)[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    if (other && (other.methods as readonly string[]).includes(name)) {
      const moved = (other.part as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!.bind(other.part);
      out[name] = (...args: unknown[]) => other.gate(() => moved(...args));
      continue;
    }
    const bound = method.bind(part) as (...args: unknown[]) => Promise<unknown>;
    out[name] = (direct as readonly string[]).includes(name) ? bound : (...args: unknown[]) => gate(() => bound(...args));
  }
  return out as T;
}

/** Resolves at the client's first 'ready'; rejects when that takes longer than `timeoutMs`. */
function ready(client: RedisClient, timeoutMs: number): Promise<void> {
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
