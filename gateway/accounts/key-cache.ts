// API keys looked up recently, kept in the process so most requests authenticate without a
// round trip to the store, and so known callers can still be served while the store is down
// (unpriced routers, or everything when failing open). Any change to a user, from any gateway,
// drops that user's entries at once (the store's change notices); an entry is trusted for
// `freshMs` at most, and served stale only while the store is unavailable.
import type { AccountStore, FoundKey } from '../../core/store/accounts.ts';
import { StoreUnavailableError } from '../../core/store/store-errors.ts';
import { forgetCallers } from './caller.ts';

type Found = FoundKey;

export interface KeyCacheOptions {
  readonly freshMs?: number;
  /** How long past freshness an entry may still serve while the store is unavailable. */
  readonly staleMs?: number;
  readonly maxEntries?: number;
  readonly now?: () => number;
}

export class KeyCache {
  readonly #store: AccountStore;
  readonly #entries = new Map<string, { found: Found; at: number }>();
  readonly #freshMs: number;
  readonly #staleMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #unsubscribe: () => void;

  constructor(store: AccountStore, options: KeyCacheOptions = {}) {
    this.#store = store;
    this.#freshMs = options.freshMs ?? 30_000;
    this.#staleMs = options.staleMs ?? 600_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#unsubscribe = store.onAccountChange((subject) => forgetCallers(this.#entries, subject, (entry) => entry.found));
  }

  async findKey(hash: string): Promise<Found | undefined> {
    const entry = this.#entries.get(hash);
    const now = this.#now();
    if (entry && now - entry.at < this.#freshMs) return entry.found;
    let found: Found | undefined;
    try {
      found = await this.#store.findKey(hash);
    } catch (error) {
      if (error instanceof StoreUnavailableError && entry && now - entry.at < this.#freshMs + this.#staleMs) return entry.found;
      throw error;
    }
    this.#entries.delete(hash);
    if (found) {
      if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(hash, { found, at: now });
    }
    return found;
  }

  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
  }
}
