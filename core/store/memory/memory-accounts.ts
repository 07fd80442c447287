// Users and API keys of a single process. Records are copied in and out, so callers can never
// change what is stored by changing what they hold.
import type { UserSpec } from '../../resources/user.ts';
import type { AccountStore, ApiKeyRecord, Page, UserRecord } from '../accounts.ts';
import { ConflictError, KeyLimitError, NotFoundError } from '../store-errors.ts';
import { byCreation, checkLimit, isActiveKey } from '../paging.ts';

export class MemoryAccounts implements AccountStore {
  readonly #listeners = new Set<(userId: string | null) => void>();
  readonly #users = new Map<string, UserRecord>();
  /** user id -> key id -> key */
  readonly #keys = new Map<string, Map<string, ApiKeyRecord>>();
  /** key hash -> its key */
  readonly #byHash = new Map<string, ApiKeyRecord>();
  /** What else goes with a deleted user (their money, limits and usage, as on Redis). */
  readonly #onDelete: (userId: string) => void;

  constructor(onDelete: (userId: string) => void = () => {}) {
    this.#onDelete = onDelete;
  }

  /** The stored user itself, synchronously, for the ledger (which only reads it). */
  peek(id: string): UserRecord | undefined {
    return this.#users.get(id);
  }

  async createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    if (this.#users.has(user.id)) throw new ConflictError(`user "${user.id}" already exists`);
    const record = frozen({ ...structuredClone(user), created_at: now.toISOString() });
    this.#users.set(user.id, record);
    return structuredClone(record);
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    const user = this.#users.get(id);
    return user && structuredClone(user);
  }

  async listUsers(after: string | null, limit: number): Promise<Page<UserRecord>> {
    checkLimit(limit);
    const ids = [...this.#users.keys()].filter((id) => after === null || id > after).sort();
    const page = ids.slice(0, limit);
    const items = page.map((id) => structuredClone(this.#users.get(id)!));
    return { items, next: ids.length > limit ? page[page.length - 1]! : null };
  }

  async updateUser(user: UserSpec): Promise<UserRecord> {
    const current = this.#users.get(user.id);
    if (!current) throw new NotFoundError(`user "${user.id}" does not exist`);
    const record = frozen({ ...structuredClone(user), created_at: current.created_at });
    this.#users.set(user.id, record);
    this.#changed(user.id);
    return structuredClone(record);
  }

  async deleteUser(id: string): Promise<boolean> {
    for (const key of this.#keys.get(id)?.values() ?? []) this.#byHash.delete(key.hash);
    this.#keys.delete(id);
    const deleted = this.#users.delete(id);
    this.#onDelete(id);
    this.#changed(id);
    return deleted;
  }

  async addKey(key: ApiKeyRecord, maxActive?: number): Promise<void> {
    if (!this.#users.has(key.user_id)) throw new NotFoundError(`user "${key.user_id}" does not exist`);
    const keys = this.#keys.get(key.user_id) ?? new Map<string, ApiKeyRecord>();
    if (keys.has(key.id)) throw new ConflictError(`user "${key.user_id}" already has a key "${key.id}"`);
    if (this.#byHash.has(key.hash)) throw new ConflictError('a key with this secret already exists');
    if (maxActive !== undefined) {
      let active = 0;
      for (const existing of keys.values()) if (isActiveKey(existing, key.created_at)) active++;
      if (active >= maxActive) throw new KeyLimitError(key.user_id, maxActive);
    }
    const stored = Object.freeze({ ...key });
    keys.set(key.id, stored);
    this.#keys.set(key.user_id, keys);
    this.#byHash.set(key.hash, stored);
  }

  async listKeys(userId: string): Promise<ApiKeyRecord[]> {
    return [...(this.#keys.get(userId)?.values() ?? [])].sort(byCreation).map((key) => ({ ...key }));
  }

  async revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    const keys = this.#keys.get(userId);
    const key = keys?.get(keyId);
    if (!keys || !key) return undefined;
    if (key.revoked_at !== null) return { ...key };
    const revoked = Object.freeze({ ...key, revoked_at: now.toISOString() });
    keys.set(keyId, revoked);
    this.#byHash.set(key.hash, revoked);
    this.#changed(userId);
    return { ...revoked };
  }

  onAccountChange(listener: (userId: string | null) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #changed(userId: string): void {
    for (const listener of this.#listeners) queueMicrotask(() => listener(userId));
  }

  async findKey(hash: string): Promise<{ key: ApiKeyRecord; user: UserRecord } | undefined> {
    const key = this.#byHash.get(hash);
    const user = key && this.#users.get(key.user_id);
    // Every request authenticates: hand out the stored records, frozen, rather than copies.
    return key && user ? { key, user } : undefined;
  }
}

/** Stored users are frozen all the way down, so they can be handed out without copying. */
function frozen(user: UserRecord): UserRecord {
  for (const value of Object.values(user)) if (value !== null && typeof value === 'object') Object.freeze(value);
  return Object.freeze(user);
}
