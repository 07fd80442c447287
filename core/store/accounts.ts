// Users, their teams and their API keys. Keys are stored only as a hash; the secret is shown once,
// at creation.
import type { KeyLimits } from '../resources/key-limits.ts';
import type { TeamSpec } from '../resources/team.ts';
import type { UserSpec } from '../resources/user.ts';

export interface UserRecord extends UserSpec {
  /** ISO time of creation. */
  readonly created_at: string;
}

export interface TeamRecord extends TeamSpec {
  /** ISO time of creation. */
  readonly created_at: string;
}

/**
 * A key's own budget and limits (KeyLimits): absent fields (keys made before keys had them) mean
 * null, none.
 */
export interface ApiKeyRecord extends Partial<KeyLimits> {
  readonly id: string;
  readonly user_id: string;
  readonly name: string;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  readonly hash: string;
  /** The secret's last characters, so people can tell their keys apart: `tg-…a1b2`. */
  readonly hint: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
}

export interface Page<T> {
  readonly items: T[];
  /** Pass as `after` to get the next page; null on the last page. */
  readonly next: string | null;
}

/** What an API key authenticates: the key, its user, and the user's team when it has one that exists. */
export interface FoundKey {
  readonly key: ApiKeyRecord;
  readonly user: UserRecord;
  readonly team?: TeamRecord;
}

export interface AccountStore {
  /** Throws ConflictError when the id is taken. */
  createUser(user: UserSpec, now: Date): Promise<UserRecord>;
  getUser(id: string): Promise<UserRecord | undefined>;
  /** Users ordered by id, `limit` at a time, starting after the id `after`. */
  listUsers(after: string | null, limit: number): Promise<Page<UserRecord>>;
  /** Replaces the user's spec (budget changes apply to the next request). Throws NotFoundError. */
  updateUser(user: UserSpec): Promise<UserRecord>;
  /** Removes the user, their keys, budget state and usage. False when there was no such user. */
  deleteUser(id: string): Promise<boolean>;

  /**
   * Throws NotFoundError when the user does not exist, and KeyLimitError when `maxActive` is
   * given and the user already has that many active keys (neither revoked nor expired at the
   * new key's created_at). The count and the write are one atomic step.
   */
  addKey(key: ApiKeyRecord, maxActive?: number): Promise<void>;
  /** All the user's keys, revoked and expired ones included, in the order they were made. */
  listKeys(userId: string): Promise<ApiKeyRecord[]>;
  /** Replaces a key's budget and limits; undefined when the user has no such key. */
  updateKey(userId: string, keyId: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined>;
  /** Marks the key revoked; undefined when the user has no such key. */
  revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined>;
  /** The key with this hash and its user, whatever the key's state (expiry and revocation are the caller's to judge). */
  findKey(hash: string): Promise<FoundKey | undefined>;

  /** Throws ConflictError when the id is taken. */
  createTeam(team: TeamSpec, now: Date): Promise<TeamRecord>;
  getTeam(id: string): Promise<TeamRecord | undefined>;
  /** Teams ordered by id, `limit` at a time, starting after the id `after`. */
  listTeams(after: string | null, limit: number): Promise<Page<TeamRecord>>;
  /** Replaces the team's spec (budget changes apply to the next request). Throws NotFoundError. */
  updateTeam(team: TeamSpec): Promise<TeamRecord>;
  /** Removes the team and its budget state; its users stay, counted in no team. False when there was no such team. */
  deleteTeam(id: string): Promise<boolean>;

  /**
   * Calls `listener` with the id of a user whose record or keys were made, changed, revoked or deleted
   * by any process on this store (`team:<id>` for a team), or with null when anything may have
   * changed (after a lost connection). Returns the unsubscribe function.
   */
  onAccountChange(listener: (subject: string | null) => void): () => void;

  /**
   * Resolves once this process's listeners (onAccountChange) have been told of every change any
   * process made before the call, or told to read everything again: what a gateway made a moment
   * ago through another gateway is then known here (a user listing an identity, issue 46).
   */
  caughtUp(): Promise<void>;
}
