// What the admin API (admins and team admins) and /v1/me read and edit users, teams and API keys
// through, whichever mode the gateway runs in: the store itself (file mode, ./store-accounts.ts),
// or in Kubernetes mode GatewayUser and GatewayTeam resources that the operator puts into the store
// (../kubernetes/cr-accounts.ts). The routes hold this and no store, so the mode is decided once,
// at start-up, as it is for routers and providers (../catalog/catalog-service.ts, RoutingCatalog).
import type { KeyLimits } from '../../core/resources/key-limits.ts';
import type { TeamSpec } from '../../core/resources/team.ts';
import type { UserSpec } from '../../core/resources/user.ts';
import type { ApiKeyRecord, Page, TeamRecord, UserRecord } from '../../core/store/accounts.ts';

/** A user's API keys: in the store in either mode (a resource never holds the keys made through the API). */
export interface UserKeys {
  /**
   * Throws NotFoundError when the user is not in the store, and KeyLimitError when the user
   * already holds `maxActive` active keys (the count and the write are one atomic step).
   */
  addKey(key: ApiKeyRecord, maxActive?: number): Promise<void>;
  /** All the user's keys, revoked and expired ones included, in the order they were made. */
  listKeys(userId: string): Promise<ApiKeyRecord[]>;
  /** Replaces a key's budget and limits; undefined when the user has no such key. */
  updateKey(userId: string, keyId: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined>;
  /** Marks the key revoked; undefined when the user has no such key. */
  revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined>;
}

/**
 * Users, teams and their keys. Reads are of the store in either mode. A write resolves to the
 * record as it will be read: at once in file mode; in Kubernetes mode once the operator has put
 * the resource into the store (until then reads show what was there before).
 */
export interface AccountDirectory extends UserKeys {
  /**
   * Whether a user may only name a team that exists. False in Kubernetes mode: the operator
   * reconciles a GatewayUser and its GatewayTeam in either order, so the team may come later.
   */
  readonly requiresKnownTeam: boolean;

  getUser(id: string): Promise<UserRecord | undefined>;
  /** Users ordered by id, `limit` at a time, starting after the id `after`. */
  listUsers(after: string | null, limit: number): Promise<Page<UserRecord>>;
  /** Throws ConflictError when the id is taken. `now` is the new user's created_at. */
  createUser(user: UserSpec, now: Date): Promise<UserRecord>;
  /** Replaces the user's spec (its created_at stays). Throws NotFoundError when there is no such user. */
  updateUser(user: UserSpec): Promise<UserRecord>;
  /** Removes the user with their keys and budget state. False when there was no such user. */
  deleteUser(id: string): Promise<boolean>;
  /**
   * Kubernetes mode: writes the user's GatewayUser as it is in the store already (the caller
   * wrote it there, to use it at once), so the resource stays its source of truth and the
   * operator's next reconcile finds nothing to change. Absent in file mode, where the store is all.
   */
  publishUser?(user: UserSpec): Promise<void>;

  getTeam(id: string): Promise<TeamRecord | undefined>;
  /** Teams ordered by id, `limit` at a time, starting after the id `after`. */
  listTeams(after: string | null, limit: number): Promise<Page<TeamRecord>>;
  /** Throws ConflictError when the id is taken. `now` is the new team's created_at. */
  createTeam(team: TeamSpec, now: Date): Promise<TeamRecord>;
  /** Replaces the team's spec (its created_at stays). Throws NotFoundError when there is no such team. */
  updateTeam(team: TeamSpec): Promise<TeamRecord>;
  /** Removes the team and its budget state; its users stay, in no team. False when there was no such team. */
  deleteTeam(id: string): Promise<boolean>;
}
