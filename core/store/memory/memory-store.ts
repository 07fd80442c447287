// The store of a standalone gateway: everything in this process, nothing shared, nothing kept
// across restarts. Its parts are used as they are; only deleting a user reaches across them.
import type { Store } from '../store.ts';
import { MemoryAccounts } from './memory-accounts.ts';
import { MemoryCatalog } from './memory-catalog.ts';
import { MemoryGatewayReports } from './memory-gateway-reports.ts';
import { MemoryLedger } from './memory-ledger.ts';
import { isKeyLevel } from '../../resources/key-limits.ts';
import { MemoryBudgetAlerts } from './memory-budget-alerts.ts';
import { MemoryResponses } from './memory-responses.ts';
import type { ResponseLimits } from '../responses.ts';
import { MemoryPromptRatios } from './memory-prompt-ratios.ts';
import { MemorySignIns } from './memory-sign-ins.ts';
import { MemoryUsageLog } from './memory-usage-log.ts';
import { MemoryPrefixIndex } from './memory-prefix-index.ts';
import { MemoryProviderHealth } from './memory-provider-health.ts';
import { MemoryEngineSignals } from './memory-engine-signals.ts';

export interface MemoryStoreOptions {
  readonly usageRetentionMs: number;
  /** Most usage records kept per user; the oldest go first. */
  readonly maxUsageRecordsPerUser?: number;
  /** What one user's stored responses may take in all (store/responses.ts). */
  readonly responseLimits?: ResponseLimits;
  /** The clock usage retention, gateway reports and sign-ins are measured on. */
  readonly now?: () => number;
}

export class MemoryStore implements Store {
  readonly healthy = true;
  /** No routing queue: queue mode needs a store gateways share (Redis). */
  readonly routingQueue = undefined;
  /** Deleting a user removes their keys, and their money, limits and usage (as Redis does); deleting a team, its money and limits. */
  readonly accounts = new MemoryAccounts((subject) => {
    this.ledger.forget(subject);
    this.usage.forget(subject);
    this.responses.forget(subject);
  });
  readonly catalog = new MemoryCatalog();
  /** A ledger subject (store/ledger.ts subjectOf) is a user's id, `key:<id>` or `team:<id>`. */
  readonly alerts = new MemoryBudgetAlerts();
  readonly ledger = new MemoryLedger((subject) => {
    if (subject.startsWith('team:')) return this.accounts.peekTeam(subject.slice(5));
    if (!subject.startsWith('key:')) return this.accounts.peek(subject);
    // The stored record itself (frozen, replaced on change): its parsed budget is cached by identity.
    const key = this.accounts.peekKey(subject.slice(4));
    return key && isKeyLevel(key) ? key : undefined;
  }, this.alerts);
  readonly usage: MemoryUsageLog;
  readonly responses: MemoryResponses;
  readonly promptRatios = new MemoryPromptRatios();
  readonly signIns: MemorySignIns;
  readonly gateways: MemoryGatewayReports;
  readonly providerHealth = new MemoryProviderHealth();
  readonly engineSignals = new MemoryEngineSignals();
  readonly prefixIndex = new MemoryPrefixIndex();

  constructor(options: MemoryStoreOptions) {
    this.usage = new MemoryUsageLog({
      retentionMs: options.usageRetentionMs,
      maxRecordsPerUser: options.maxUsageRecordsPerUser,
      now: options.now,
    });
    this.gateways = new MemoryGatewayReports(options.now);
    this.signIns = new MemorySignIns(options.now);
    this.responses = new MemoryResponses(options.usageRetentionMs, { limits: options.responseLimits, now: options.now });
  }

  /** Memory is seeded at start-up and lost only with the process. */
  async markSeeded(): Promise<void> {}
  onDataLost(): () => void {
    return () => {};
  }

  async close(): Promise<void> {}
}
