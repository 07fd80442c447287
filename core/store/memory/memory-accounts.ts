// Users, teams and API keys of a single process. Records are copied in and out, so callers can never
// change what is stored by changing what they hold.
import type { KeyLimits } from '../../resources/key-limits.ts';
import type { TeamSpec } from '../../resources/team.ts';
import type { UserSpec } from '../../resources/user.ts';
import type { AccountStore, ApiKeyRecord, FoundKey, Page, TeamRecord, UserRecord } from '../accounts.ts';
import { ConflictError, KeyLimitError, NotFoundError } from '../store-errors.ts';
import { byCreation, checkLimit, isActiveKey } from '../paging.ts';

export class MemoryAccounts implements AccountStore {
  readonly #listeners = new Set<(userId: string | null) => void>();
  readonly #users = new Map<string, UserRecord>();
  readonly #teams = new Map<string, TeamRecord>();
  /** The last FoundKey handed out for a key record. */
  readonly #found = new WeakMap<ApiKeyRecord, FoundKey>();
  /** key id -> key, for the ledger */
  readonly #byId = new Map<string, ApiKeyRecord>();
  /** user id -> key id -> key */
  readonly #keys = new Map<string, Map<string, ApiKeyRecord>>();
  /** key hash -> its key */
  readonly #byHash = new Map<string, ApiKeyRecord>();
  /** What else goes with a deleted user, key or team (its money, limits and usage, as on Redis): a ledger subject. */
  readonly #onDelete: (subject: string) => void;

  constructor(onDelete: (subject: string) => void = () => {}) {
    this.#onDelete = onDelete;
  }

  /** The stored user itself, synchronously, for the ledger (which only reads it). */
  peek(id: string): UserRecord | undefined {
    return this.#users.get(id);
  }

  /** The stored team, synchronously, for the ledger. */
  peekTeam(id: string): TeamRecord | undefined {
    return this.#teams.get(id);
  }

  /** The stored key with this id, synchronously, for the ledger. */
  peekKey(id: string): ApiKeyRecord | undefined {
    return this.#byId.get(id);
  }

  async createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    if (this.#users.has(user.id)) throw new ConflictError(`user "${user.id}" already exists`);
    const record = frozen({ ...structuredClone(user), created_at: now.toISOString() });
    this.#users.set(user.id, record);
    this.#changed(user.id); // the identities it lists are read again (identity-directory.ts)
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
    for (const key of this.#keys.get(id)?.values() ?? []) {
      this.#byHash.delete(key.hash);
      this.#byId.delete(key.id);
      this.#onDelete(`key:${key.id}`);
    }
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
    this.#store(key, keys);
  }

  #store(key: ApiKeyRecord, keys = this.#keys.get(key.user_id) ?? new Map<string, ApiKeyRecord>()): ApiKeyRecord {
    const stored = frozen({ ...key });
    keys.set(key.id, stored);
    this.#keys.set(key.user_id, keys);
    this.#byHash.set(key.hash, stored);
    this.#byId.set(key.id, stored);
    return stored;
  }

  async updateKey(userId: string, keyId: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined> {
    const key = this.#keys.get(userId)?.get(keyId);
    if (!key) return undefined;
    const updated = this.#store({ ...key, ...structuredClone(limits) });
    this.#changed(userId);
    return structuredClone(updated);
  }

  async listKeys(userId: string): Promise<ApiKeyRecord[]> {
    return [...(this.#keys.get(userId)?.values() ?? [])].sort(byCreation).map((key) => ({ ...key }));
  }

  async revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    const keys = this.#keys.get(userId);
    const key = keys?.get(keyId);
    if (!keys || !key) return undefined;
    if (key.revoked_at !== null) return { ...key };
    const revoked = this.#store({ ...key, revoked_at: now.toISOString() });
    this.#changed(userId);
    return { ...revoked };
  }

  async createTeam(team: TeamSpec, now: Date): Promise<TeamRecord> {
    if (this.#teams.has(team.id)) throw new ConflictError(`team "${team.id}" already exists`);
    const record = frozen({ ...structuredClone(team), created_at: now.toISOString() });
    this.#teams.set(team.id, record);
    this.#changed(`team:${team.id}`);
    return structuredClone(record);
  }

  async getTeam(id: string): Promise<TeamRecord | undefined> {
    const team = this.#teams.get(id);
    return team && structuredClone(team);
  }

  async listTeams(after: string | null, limit: number): Promise<Page<TeamRecord>> {
    checkLimit(limit);
    const ids = [...this.#teams.keys()].filter((id) => after === null || id > after).sort();
    const page = ids.slice(0, limit);
    return { items: page.map((id) => structuredClone(this.#teams.get(id)!)), next: ids.length > limit ? page[page.length - 1]! : null };
  }

  async updateTeam(team: TeamSpec): Promise<TeamRecord> {
    const current = this.#teams.get(team.id);
    if (!current) throw new NotFoundError(`team "${team.id}" does not exist`);
    const record = frozen({ ...structuredClone(team), created_at: current.created_at });
    this.#teams.set(team.id, record);
    this.#changed(`team:${team.id}`);
    return structuredClone(record);
  }

  async deleteTeam(id: string): Promise<boolean> {
    const deleted = this.#teams.delete(id);
    this.#onDelete(`team:${id}`);
    this.#changed(`team:${id}`);
    return deleted;
  }

  onAccountChange(listener: (subject: string | null) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Every notice is queued (a microtask) as its change is made: whatever runs after has been told. */
  async caughtUp(): Promise<void> {}

  #changed(userId: string): void {
    for (const listener of this.#listeners) queueMicrotask(() => listener(userId));
  }

  async findKey(hash: string): Promise<FoundKey | undefined> {
    const key = this.#byHash.get(hash);
    const user = key && this.#users.get(key.user_id);
    if (!key || !user) return undefined;
    // Every request authenticates: hand out the stored records, frozen, rather than copies, and
    // the same FoundKey while none of them changed (what is worked out per caller is cached by it).
    const team = user.team === null ? undefined : this.#teams.get(user.team);
    const found = this.#found.get(key);
    if (found && found.user === user && found.team === team) return found;
    const fresh: FoundKey = Object.freeze(team ? { key, user, team } : { key, user });
    this.#found.set(key, fresh);
    return fresh;
  }
}

/** Stored records are frozen all the way down, so they can be handed out without copying. */
function frozen<T extends object>(record: T): T {
  for (const value of Object.values(record)) if (value !== null && typeof value === 'object') Object.freeze(value);
  return Object.freeze(record);
}
