// Users, teams and API keys on Redis (key layout in keys.ts). The user and team hashes carry,
// beside the spec, the two fields the ledger's scripts read: `budget` in micro-units and
// `period`; so does a key's budget hash, for a key with a budget or limits of its own.
//
// The scripts that create a user (user hash + users index), add a key (user's keys + the key
// index) and find a key touch keys in different cluster slots: this store needs one Redis
// server (with replicas if you like), not a Redis Cluster.
import type { Redis } from 'ioredis';
import type { UserSpec } from '../../resources/user.ts';
import type { TeamSpec } from '../../resources/team.ts';
import { isKeyLevel, keyLimitsOf, type KeyLimits } from '../../resources/key-limits.ts';
import { parseDecimal } from '../../money/decimal.ts';
import type { AccountStore, ApiKeyRecord, FoundKey, Page, TeamRecord, UserRecord } from '../accounts.ts';
import { ConflictError, KeyLimitError, NotFoundError } from '../store-errors.ts';
import { byCreation, checkLimit } from '../paging.ts';
import { keys, levelKeys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import type { RedisChannels } from './redis-channels.ts';

/** How many keys one SCAN step asks for when deleting a user. */
const SCAN_COUNT = 1000;

/** How often a key change is tried again when another change came first (key-replace.lua). */
const KEY_REPLACE_TRIES = 10;

export class RedisAccounts implements AccountStore {
  readonly #redis: Redis;
  readonly #create: LuaScript;
  readonly #update: LuaScript;
  readonly #addKey: LuaScript;
  readonly #replaceKey: LuaScript;
  readonly #findKey: LuaScript;
  /** Prefix and suffix of a user hash's, a user's keys hash's and a team hash's names, for key-find.lua. */
  readonly #templates = [...template(keys.user), ...template(keys.userKeys), ...template(keys.team)];

  readonly #channels: RedisChannels;
  readonly #beforeChange: (subject: string) => Promise<unknown>;

  /**
   * `beforeChange` runs before a user, key or team (a ledger subject) is updated or deleted (the
   * ledger gives back this gateway's leases).
   */
  constructor(redis: Redis, channels: RedisChannels, beforeChange: (subject: string) => Promise<unknown> = async () => {}) {
    this.#redis = redis;
    this.#channels = channels;
    this.#beforeChange = beforeChange;
    this.#create = defineScript(redis, 'account-create', 2);
    this.#update = defineScript(redis, 'account-update', 1);
    this.#addKey = defineScript(redis, 'key-add', 3);
    this.#replaceKey = defineScript(redis, 'key-replace', 2);
    this.#findKey = defineScript(redis, 'key-find', 1);
  }

  createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    return this.#createRecord('user', keys.user(user.id), keys.users, user, now);
  }

  /** Writes a new user's or team's hash and lists it in its index (account-create.lua); ConflictError when the id is taken. */
  async #createRecord<Spec extends BudgetOwner>(
    what: 'user' | 'team',
    hash: string,
    index: string,
    spec: Spec,
    now: Date,
  ): Promise<Spec & { created_at: string }> {
    const created_at = now.toISOString();
    const created = await this.#create.run(hash, index, spec.id, JSON.stringify(spec), created_at, ...budgetFields(spec));
    if (created !== 1) throw new ConflictError(`${what} "${spec.id}" already exists`);
    return { ...spec, created_at };
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    const [spec, createdAt] = await this.#redis.hmget(keys.user(id), 'spec', 'created_at');
    return userRecord(spec ?? null, createdAt ?? null);
  }

  listUsers(after: string | null, limit: number): Promise<Page<UserRecord>> {
    return this.#list(keys.users, keys.user, userRecord, after, limit);
  }

  /** A page of the records an index (a sorted set of ids) lists, each read from its hash. */
  async #list<T>(
    index: string,
    hash: (id: string) => string,
    record: (spec: string | null, createdAt: string | null) => T | undefined,
    after: string | null,
    limit: number,
  ): Promise<Page<T>> {
    checkLimit(limit);
    const ids = await this.#redis.zrangebylex(index, after === null ? '-' : `(${after}`, '+', 'LIMIT', 0, limit + 1);
    const page = ids.slice(0, limit);
    const pipeline = this.#redis.pipeline();
    for (const id of page) pipeline.hmget(hash(id), 'spec', 'created_at');
    const replies = page.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    const items: T[] = [];
    for (const [error, fields] of replies) {
      if (error) throw error;
      const [spec, createdAt] = fields as (string | null)[];
      // One deleted between the two reads is simply not listed.
      const found = record(spec ?? null, createdAt ?? null);
      if (found) items.push(found);
    }
    return { items, next: ids.length > limit ? page[page.length - 1]! : null };
  }

  async updateUser(user: UserSpec): Promise<UserRecord> {
    await this.#beforeChange(user.id);
    const createdAt = await this.#update.run(keys.user(user.id), JSON.stringify(user), ...budgetFields(user));
    if (typeof createdAt !== 'string') throw new NotFoundError(`user "${user.id}" does not exist`);
    await this.#changed(user.id);
    return { ...user, created_at: createdAt };
  }

  async deleteUser(id: string): Promise<boolean> {
    await this.#beforeChange(id);
    const userKeys = await this.#scan(keys.userPattern(id));
    const records = (await this.#redis.hvals(keys.userKeys(id))).map((raw) => JSON.parse(raw) as ApiKeyRecord);
    const apiKeys = records.map((key) => keys.apiKey(key.hash));
    // Each key's own money and limits (its budget hash, ledger, holds, history, rate limits).
    const keyLevels: string[] = [];
    for (const key of records) keyLevels.push(...(await this.#scan(keys.apiKeyLevelPattern(key.id))));
    const others = [...userKeys, ...apiKeys, ...keyLevels].filter((key) => key !== keys.user(id));
    const transaction = this.#redis.multi().del(keys.user(id));
    if (others.length > 0) transaction.unlink(...others);
    transaction.zrem(keys.users, id);
    const [[error, deleted] = []] = (await transaction.exec()) ?? [];
    if (error) throw error;
    await this.#changed(id);
    return deleted === 1;
  }

  async addKey(key: ApiKeyRecord, maxActive?: number): Promise<void> {
    const reference = JSON.stringify({ user_id: key.user_id, key_id: key.id });
    const most = maxActive === undefined ? '' : String(maxActive);
    const outcome = await this.#addKey.run(
      keys.user(key.user_id),
      keys.userKeys(key.user_id),
      keys.apiKey(key.hash),
      key.id,
      JSON.stringify(key),
      reference,
      most,
      key.created_at,
    );
    if (outcome === 'not_found') throw new NotFoundError(`user "${key.user_id}" does not exist`);
    if (outcome === 'limit') throw new KeyLimitError(key.user_id, maxActive!);
    if (outcome === 'conflict')
      throw new ConflictError(`user "${key.user_id}" already has a key "${key.id}", or a key with this secret exists`);
    // A new key: nobody holds it yet, so its budget hash may follow the record.
    if (isKeyLevel(key)) {
      const [budget, period, alerts, soft] = keyBudgetFields(key);
      await this.#redis.hset(levelKeys(`key:${key.id}`).budget, 'budget', budget, 'period', period, 'alerts', alerts, 'soft', soft);
    }
  }

  async updateKey(userId: string, keyId: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined> {
    await this.#beforeChange(`key:${keyId}`);
    const updated = await this.#changeKey(userId, keyId, (key) => ({ ...key, ...limits }), true);
    if (updated) await this.#changed(userId);
    return updated;
  }

  async listKeys(userId: string): Promise<ApiKeyRecord[]> {
    const raw = await this.#redis.hvals(keys.userKeys(userId));
    return raw.map((json) => JSON.parse(json) as ApiKeyRecord).sort(byCreation);
  }

  async revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    // A key revoked before keeps its first revocation time.
    const revoked = await this.#changeKey(
      userId,
      keyId,
      (key) => (key.revoked_at === null ? { ...key, revoked_at: now.toISOString() } : key),
      false,
    );
    if (revoked) await this.#changed(userId);
    return revoked;
  }

  /**
   * Changes a key record as `change` says, in a compare and set (key-replace.lua) tried again
   * while other changes come first; with `budget`, writes its budget hash too.
   */
  async #changeKey(
    userId: string,
    keyId: string,
    change: (key: ApiKeyRecord) => ApiKeyRecord,
    budget: boolean,
  ): Promise<ApiKeyRecord | undefined> {
    for (let attempt = 0; attempt < KEY_REPLACE_TRIES; attempt++) {
      const raw = await this.#redis.hget(keys.userKeys(userId), keyId);
      if (raw === null) return undefined;
      const key = change(JSON.parse(raw) as ApiKeyRecord);
      const json = JSON.stringify(key);
      if (json === raw) return key;
      const fields = budget ? ['1', ...keyBudgetFields(key)] : ['', '', '', '', ''];
      const outcome = await this.#replaceKey.run(keys.userKeys(userId), levelKeys(`key:${keyId}`).budget, keyId, raw, json, ...fields);
      if (outcome === 1) return key;
      if (outcome !== 0) return undefined;
    }
    throw new ConflictError(`key "${keyId}" kept changing while it was being changed: try again`);
  }

  async findKey(hash: string): Promise<FoundKey | undefined> {
    const found = await this.#findKey.run(keys.apiKey(hash), ...this.#templates);
    if (!Array.isArray(found)) return undefined;
    const [key, spec, createdAt, teamSpec, teamCreatedAt] = found as [string, string, string, string?, string?];
    const record = { key: JSON.parse(key) as ApiKeyRecord, user: userRecord(spec, createdAt)! };
    return teamSpec === undefined ? record : { ...record, team: teamRecord(teamSpec, teamCreatedAt!)! };
  }

  async createTeam(team: TeamSpec, now: Date): Promise<TeamRecord> {
    const created = await this.#createRecord('team', keys.team(team.id), keys.teams, team, now);
    await this.#changed(`team:${team.id}`);
    return created;
  }

  async getTeam(id: string): Promise<TeamRecord | undefined> {
    const [spec, createdAt] = await this.#redis.hmget(keys.team(id), 'spec', 'created_at');
    return teamRecord(spec ?? null, createdAt ?? null);
  }

  listTeams(after: string | null, limit: number): Promise<Page<TeamRecord>> {
    return this.#list(keys.teams, keys.team, teamRecord, after, limit);
  }

  async updateTeam(team: TeamSpec): Promise<TeamRecord> {
    await this.#beforeChange(`team:${team.id}`);
    const createdAt = await this.#update.run(keys.team(team.id), JSON.stringify(team), ...budgetFields(team));
    if (typeof createdAt !== 'string') throw new NotFoundError(`team "${team.id}" does not exist`);
    await this.#changed(`team:${team.id}`);
    return { ...team, created_at: createdAt };
  }

  async deleteTeam(id: string): Promise<boolean> {
    await this.#beforeChange(`team:${id}`);
    const others = (await this.#scan(keys.teamPattern(id))).filter((key) => key !== keys.team(id));
    const transaction = this.#redis.multi().del(keys.team(id));
    if (others.length > 0) transaction.unlink(...others);
    transaction.zrem(keys.teams, id);
    const [[error, deleted] = []] = (await transaction.exec()) ?? [];
    if (error) throw error;
    await this.#changed(`team:${id}`);
    return deleted === 1;
  }

  onAccountChange(listener: (subject: string | null) => void): () => void {
    return this.#channels.listen(keys.accountsChanged, listener);
  }

  /** Tells every gateway's caches that this user's record or keys (or, `team:<id>`, this team) changed. */
  async #changed(subject: string): Promise<void> {
    await this.#redis.publish(keys.accountsChanged, subject);
  }

  /** Every key matching a SCAN pattern. */
  async #scan(pattern: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found;
  }
}

type BudgetOwner = { id: string } & Pick<KeyLimits, 'budget' | 'budget_period' | 'budget_alerts' | 'soft_budget'>;

/**
 * A user's or team's hash's `budget` (micros, '' = unlimited), `period` ('' = none), `alerts`
 * (thresholds in percent, '50,80,100'; '' = none) and `soft` ('1' = alerts only), as the ledger
 * reads them.
 */
function budgetFields(owner: BudgetOwner): [budget: string, period: string, alerts: string, soft: string] {
  const rest = [owner.budget_period ?? '', (owner.budget_alerts ?? []).join(','), owner.soft_budget ? '1' : ''] as const;
  if (owner.budget === null) return ['', ...rest];
  const parsed = parseDecimal(owner.budget, 6);
  if (!parsed.ok) throw new RangeError(`"${owner.id}": budget ${parsed.reason}`);
  return [parsed.value.toString(), ...rest];
}

/** A key's budget hash's fields, as for a user (budgetFields). */
function keyBudgetFields(key: ApiKeyRecord): [budget: string, period: string, alerts: string, soft: string] {
  return budgetFields({ id: key.id, ...keyLimitsOf(key) });
}

/** A user's or team's record from its hash's `spec` and `created_at`; undefined when it is gone. */
function storedRecord<Spec>(spec: string | null, createdAt: string | null): (Spec & { created_at: string }) | undefined {
  if (spec === null || createdAt === null) return undefined;
  return { ...(JSON.parse(spec) as Spec), created_at: createdAt };
}

const userRecord = storedRecord<UserSpec>;
const teamRecord = storedRecord<TeamSpec>;

/** A key name function split around the id: [prefix, suffix]. */
function template(name: (id: string) => string): [string, string] {
  const marker = '\u0000';
  const [prefix = '', suffix = ''] = name(marker).split(marker);
  return [prefix, suffix];
}
