// Provider health of a standalone gateway: kept for this process only (the admin API and metrics
// read it); there is no other gateway to tell or to share probes with.
import { UNKNOWN_CONDITION, type ProviderCondition, type ProviderHealthStore, type ProviderRef } from '../provider-health.ts';

export class MemoryProviderHealth implements ProviderHealthStore {
  readonly #conditions = new Map<string, ProviderCondition>();

  async open({ id }: ProviderRef, until: number, reason: string): Promise<void> {
    this.#set(id, { openUntil: until, reason });
  }

  async close({ id }: ProviderRef): Promise<void> {
    this.#set(id, { openUntil: 0, reason: this.#get(id).healthy === false ? this.#get(id).reason : null });
  }

  async reportHealth({ id }: ProviderRef, healthy: boolean, reason: string | null, at: number): Promise<void> {
    this.#set(id, { healthy, reason, checkedAt: at });
  }

  async forgetHealth({ id }: ProviderRef): Promise<void> {
    this.#set(id, { healthy: undefined, checkedAt: null });
  }

  async read(providers: readonly ProviderRef[]): Promise<Map<string, ProviderCondition>> {
    return new Map(providers.map(({ id }) => [id, this.#get(id)]));
  }

  async claimProbe(): Promise<boolean> {
    return true;
  }

  onNotice(): () => void {
    return () => {};
  }

  #get(id: string): ProviderCondition {
    return this.#conditions.get(id) ?? UNKNOWN_CONDITION;
  }

  #set(id: string, change: Partial<ProviderCondition>): void {
    this.#conditions.set(id, { ...this.#get(id), ...change });
  }
}
