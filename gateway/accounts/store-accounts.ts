// File mode's account directory (memory or Redis): users, teams and keys are written to the store
// itself, where every gateway on it reads them at once. Kubernetes mode writes resources instead
// (../kubernetes/cr-accounts.ts), and reads and keys through this class.
import type { KeyLimits } from '../../core/resources/key-limits.ts';
import type { TeamSpec } from '../../core/resources/team.ts';
import type { UserSpec } from '../../core/resources/user.ts';
import type { AccountStore, ApiKeyRecord, Page, TeamRecord, UserRecord } from '../../core/store/accounts.ts';
import type { AccountDirectory } from './account-directory.ts';

export class StoreAccounts implements AccountDirectory {
  /** The store checks nothing of a user's team, so the admin API does, before it writes. */
  readonly requiresKnownTeam: boolean = true;
  readonly #store: AccountStore;

  constructor(store: AccountStore) {
    this.#store = store;
  }

  getUser(id: string): Promise<UserRecord | undefined> {
    return this.#store.getUser(id);
  }

  listUsers(after: string | null, limit: number): Promise<Page<UserRecord>> {
    return this.#store.listUsers(after, limit);
  }

  createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    return this.#store.createUser(user, now);
  }

  updateUser(user: UserSpec): Promise<UserRecord> {
    return this.#store.updateUser(user);
  }

  deleteUser(id: string): Promise<boolean> {
    return this.#store.deleteUser(id);
  }

  getTeam(id: string): Promise<TeamRecord | undefined> {
    return this.#store.getTeam(id);
  }

  listTeams(after: string | null, limit: number): Promise<Page<TeamRecord>> {
    return this.#store.listTeams(after, limit);
  }

  createTeam(team: TeamSpec, now: Date): Promise<TeamRecord> {
    return this.#store.createTeam(team, now);
  }

  updateTeam(team: TeamSpec): Promise<TeamRecord> {
    return this.#store.updateTeam(team);
  }

  deleteTeam(id: string): Promise<boolean> {
    return this.#store.deleteTeam(id);
  }

  addKey(key: ApiKeyRecord, maxActive?: number): Promise<void> {
    return this.#store.addKey(key, maxActive);
  }

  listKeys(userId: string): Promise<ApiKeyRecord[]> {
    return this.#store.listKeys(userId);
  }

  updateKey(userId: string, keyId: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined> {
    return this.#store.updateKey(userId, keyId, limits);
  }

  revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    return this.#store.revokeKey(userId, keyId, now);
  }
}
