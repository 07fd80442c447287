// The store of a standalone gateway: everything in this process, nothing shared, nothing kept
// across restarts.
import type { UserSpec } from '../../resources/user.ts';
import type { ProviderSpec } from '../../resources/provider.ts';
import type { RouterSpec } from '../../resources/router.ts';
import type { ApiKeyRecord, Page, UserRecord } from '../accounts.ts';
import type { Catalog } from '../catalog.ts';
import type { Admission, AdmissionResult, Balance, Settlement, SettleResult } from '../ledger.ts';
import type { Store } from '../store.ts';
import type { UsagePage, UsageQuery, UsageRecord, UsageTotals } from '../usage-log.ts';
import { MemoryAccounts } from './memory-accounts.ts';
import { MemoryCatalog } from './memory-catalog.ts';
import { MemoryLedger } from './memory-ledger.ts';
import { MemoryUsageLog } from './memory-usage-log.ts';
import { addCounts, halveIfFull, type RatioCounts } from '../prompt-ratios.ts';

export interface MemoryStoreOptions {
  readonly usageRetentionMs: number;
  /** Most usage records kept per user; the oldest go first. */
  readonly maxUsageRecordsPerUser?: number;
  /** The clock usage retention is measured on. */
  readonly now?: () => number;
}

export class MemoryStore implements Store {
  readonly healthy = true;
  readonly #accounts = new MemoryAccounts();
  readonly #catalog = new MemoryCatalog();
  readonly #ledger = new MemoryLedger((userId) => this.#accounts.peek(userId));
  readonly #usage: MemoryUsageLog;

  constructor(options: MemoryStoreOptions) {
    this.#usage = new MemoryUsageLog({
      retentionMs: options.usageRetentionMs,
      maxRecordsPerUser: options.maxUsageRecordsPerUser,
      now: options.now,
    });
  }

  createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    return this.#accounts.createUser(user, now);
  }
  getUser(id: string): Promise<UserRecord | undefined> {
    return this.#accounts.getUser(id);
  }
  listUsers(after: string | null, limit: number): Promise<Page<UserRecord>> {
    return this.#accounts.listUsers(after, limit);
  }
  updateUser(user: UserSpec): Promise<UserRecord> {
    return this.#accounts.updateUser(user);
  }
  /** Removes the user with their keys, and with their money, limits and usage (as Redis does). */
  async deleteUser(id: string): Promise<boolean> {
    const existed = await this.#accounts.deleteUser(id);
    this.#ledger.forget(id);
    this.#usage.forget(id);
    return existed;
  }
  addKey(key: ApiKeyRecord, maxActive?: number): Promise<void> {
    return this.#accounts.addKey(key, maxActive);
  }
  listKeys(userId: string): Promise<ApiKeyRecord[]> {
    return this.#accounts.listKeys(userId);
  }
  revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    return this.#accounts.revokeKey(userId, keyId, now);
  }
  findKey(hash: string): Promise<{ key: ApiKeyRecord; user: UserRecord } | undefined> {
    return this.#accounts.findKey(hash);
  }

  readCatalog(): Promise<Catalog> {
    return this.#catalog.readCatalog();
  }
  writeCatalog(expectedRevision: number, next: { routers: RouterSpec[]; providers: ProviderSpec[] }): Promise<number | 'conflict'> {
    return this.#catalog.writeCatalog(expectedRevision, next);
  }
  onCatalogChange(listener: () => void): () => void {
    return this.#catalog.onCatalogChange(listener);
  }
  onAccountChange(listener: (userId: string | null) => void): () => void {
    return this.#accounts.onAccountChange(listener);
  }

  admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    return this.#ledger.admit(userId, admission);
  }
  settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    return this.#ledger.settle(userId, settlement);
  }
  balance(userId: string, now: number): Promise<Balance> {
    return this.#ledger.balance(userId, now);
  }

  append(record: UsageRecord): Promise<void> {
    return this.#usage.append(record);
  }
  query(userId: string, query: UsageQuery): Promise<UsagePage> {
    return this.#usage.query(userId, query);
  }
  dailyTotals(subject: { user: string } | { router: string }, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>> {
    return this.#usage.dailyTotals(subject, fromDay, toDay);
  }

  readonly #ratios: RatioCounts = new Map();
  async addPromptRatios(counts: RatioCounts): Promise<void> {
    addCounts(this.#ratios, counts);
    for (const router of counts.keys()) halveIfFull(this.#ratios.get(router)!);
  }
  async promptRatios(): Promise<RatioCounts> {
    return new Map([...this.#ratios].map(([router, buckets]) => [router, new Map(buckets)]));
  }

  /** Memory is seeded at start-up and lost only with the process. */
  async markSeeded(): Promise<void> {}
  onDataLost(): () => void {
    return () => {};
  }

  async close(): Promise<void> {}
}
