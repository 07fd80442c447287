// The state a gateway shares with its peers. Two implementations behind one contract:
// in memory (one process, the standalone default) and Redis (any number of gateways).
import type { AccountStore } from './accounts.ts';
import type { CatalogStore } from './catalog.ts';
import type { Ledger } from './ledger.ts';
import type { PromptRatioStore } from './prompt-ratios.ts';
import type { UsageLog } from './usage-log.ts';

export interface Store extends AccountStore, CatalogStore, Ledger, UsageLog, PromptRatioStore {
  /** True while the backing service answers (checked in the background, never per request). */
  readonly healthy: boolean;
  /** Records that what must exist at start-up (admin key, the config file's users and routers) is in the store. */
  markSeeded(): Promise<void>;
  /**
   * Calls `listener` when the store is found to have lost what was seeded (Redis restarted
   * empty, or flushed), again and again until markSeeded() is called.
   */
  onDataLost(listener: () => void): () => void;
  close(): Promise<void>;
}
