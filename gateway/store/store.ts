// The state a gateway shares with its peers. Two implementations behind one contract:
// in memory (one process, the standalone default) and Redis (any number of gateways).
import type { AccountStore } from './accounts.ts';
import type { CatalogStore } from './catalog.ts';
import type { Ledger } from './ledger.ts';
import type { PromptRatioStore } from './prompt-ratios.ts';
import type { UsageLog } from './usage-log.ts';

export interface Store extends AccountStore, CatalogStore, Ledger, UsageLog, PromptRatioStore {
  /** True while the backing service answers. */
  readonly healthy: boolean;
  close(): Promise<void>;
}
