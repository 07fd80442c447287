// The state a gateway shares with its peers, as its parts: each part is one contract with two
// implementations, in memory (one process, the standalone default) and on Redis (any number of
// gateways, and the operator). Callers name the part they use: `store.ledger.admit(...)`.
import type { RedisTopologyView } from './redis/redis-topology.ts';
import type { AccountStore } from './accounts.ts';
import type { CatalogStore } from './catalog.ts';
import type { GatewayReports } from './gateway-reports.ts';
import type { Ledger } from './ledger.ts';
import type { BudgetAlerts } from './budget-alerts.ts';
import type { ResponseStore } from './responses.ts';
import type { PromptRatioStore } from './prompt-ratios.ts';
import type { PrefixIndexStore } from './prefix-index.ts';
import type { ProviderHealthStore } from './provider-health.ts';
import type { UsageLog } from './usage-log.ts';
import type { RoutingQueue } from './routing-queue.ts';
import type { EngineSignalStore } from './engine-signals.ts';
import type { SignInStore } from './sign-ins.ts';

export interface Store {
  /** Users and their API keys. */
  readonly accounts: AccountStore;
  /** Routers and providers created at run time. */
  readonly catalog: CatalogStore;
  /** Money and rate limits: admission and settlement. */
  readonly ledger: Ledger;
  /** Alerts settlement raised as budgets near their end, for the gateways and the operator to deliver. */
  readonly alerts: BudgetAlerts;
  /** The Responses API's stored responses. */
  readonly responses: ResponseStore;
  /** Usage records and daily totals. */
  readonly usage: UsageLog;
  /** What backends report against the gateway's prompt counts. */
  readonly promptRatios: PromptRatioStore;
  /** Which snapshot version each gateway pod serves (Kubernetes mode). */
  readonly gateways: GatewayReports;
  /** Open circuit breakers and health check verdicts of the providers, shared by the gateways. */
  readonly providerHealth: ProviderHealthStore;
  /** What the inference engines last said of their load (scraped once for the fleet), and the requests sent to them since. */
  readonly engineSignals: EngineSignalStore;
  /** Which prompt prefixes each engine replica was sent lately (prefix-cache affinity). */
  readonly prefixIndex: PrefixIndexStore;
  /** Single sign-on's sessions and sign-ins under way. */
  readonly signIns: SignInStore;
  /** Queue mode's queue: a capability only a shared store has (Redis); without it every request is placed by its gateway. */
  readonly routingQueue?: RoutingQueue | undefined;
  /** True while the backing service answers (checked in the background, never per request). */
  readonly healthy: boolean;
  /** Redis only: its mode, the primary connected to and its replicas (read in the background). */
  readonly topology?: RedisTopologyView;
  /** Records that what must exist at start-up (admin key, the config file's users and routers) is in the store. */
  markSeeded(): Promise<void>;
  /**
   * Calls `listener` when the store is found to have lost what was seeded (Redis restarted
   * empty, or flushed), again and again until markSeeded() is called.
   */
  onDataLost(listener: () => void): () => void;
  close(): Promise<void>;
}
