// Users, teams and API keys on Redis (key layout in keys.ts). The user and team hashes carry,
// beside the spec, the two fields the ledger's scripts read: `budget` in micro-units and
// `period`; so does a key's budget hash, for a key with a budget or limits of its own.
//
// On a Redis Cluster, what one script did on one Redis is split where its keys lie in several
// slots, each step ordered so that a process stopped between two leaves nothing reachable
// half-made: a user is listed in the index before its hash is written (the list skips ids without
// one), a key's index entry is set before its record (and removed if the record is refused), a key
// is found in three reads. A user's money home (keys.ts MoneyHome) gets a copy of the user's budget
// fields when it is the team's slot, and a key's budget hash; a user who changes teams has it moved
// (redis-money-move.ts).
import { deleteKeys, pipelined, scanAll, type RedisClient } from './redis-client.ts';
import type { UserSpec } from '../../resources/user.ts';
import type { TeamSpec } from '../../resources/team.ts';
import { isKeyLevel, keyLimitsOf, type KeyLimits } from '../../resources/key-limits.ts';
import { parseDecimal } from '../../money/decimal.ts';
import type { AccountStore, ApiKeyRecord, FoundKey, Page, TeamRecord, UserRecord } from '../accounts.ts';
import { ConflictError, KeyLimitError, NotFoundError } from '../store-errors.ts';
import { byCreation, checkLimit } from '../paging.ts';
import { keys, levelKeys, type MoneyHome } from './keys.ts';
import { moveMoney } from './redis-money-move.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import type { RedisChannels } from './redis-channels.ts';

/** How often a key change is tried again when another change came first (key-replace.lua). */
const KEY_REPLACE_TRIES = 10;

export class RedisAccounts implements AccountStore {
  readonly #redis: RedisClient;
  /** On a Redis Cluster: scripts keep to one slot, and money lives at its home (keys.ts). */
  readonly #cluster: boolean;
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
  constructor(redis: RedisClient, channels: RedisChannels, beforeChange: (subject: string) => Promise<unknown> = async () => {}) {
    this.#redis = redis;
    this.#channels = channels;
    this.#beforeChange = beforeChange;
    this.#cluster = redis.isCluster;
    this.#create = defineScript(redis, 'account-create');
    this.#update = defineScript(redis, 'account-update', 1);
    this.#addKey = defineScript(redis, 'key-add');
    this.#replaceKey = defineScript(redis, 'key-replace');
    this.#findKey = defineScript(redis, 'key-find', 1);
  }

  async createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    const created = await this.#createRecord('user', keys.user(user.id), keys.users, user, now);
    await this.#writeHomeBudget(user);
    await this.#changed(user.id); // every gateway reads the identities it lists (identity-directory.ts)
    return created;
  }

  /** On a cluster, a team member's budget fields, copied to the money's home in the team's slot (the ledger reads them there). */
  async #writeHomeBudget(user: UserSpec): Promise<void> {
    if (!this.#cluster || !user.team) return;
    await this.#writeBudget(levelKeys(user.id, homeOf(user)).budget, budgetFields(user));
  }

  /** Writes a budget hash's fields, as the ledger's scripts read them (budgetFields). */
  async #writeBudget(hash: string, [budget, period, alerts, soft]: BudgetFields): Promise<void> {
    await this.#redis.hset(hash, 'budget', budget, 'period', period, 'alerts', alerts, 'soft', soft);
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
    const args = [spec.id, JSON.stringify(spec), created_at, ...budgetFields(spec)];
    let created: unknown;
    if (this.#cluster) {
      // Listed first: an id listed without a hash is not shown, a hash never listed would be lost.
      await this.#redis.zadd(index, 0, spec.id);
      created = await this.#create.runWithKeys([hash], args);
    } else created = await this.#create.runWithKeys([hash, index], args);
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
    const replies = await pipelined(this.#redis, page, hash, (pipeline, id) => pipeline.hmget(hash(id), 'spec', 'created_at'));
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
    // On a cluster, the team before the change: a new team moves the user's money there.
    const before = this.#cluster ? await this.getUser(user.id) : undefined;
    const createdAt = await this.#update.run(keys.user(user.id), JSON.stringify(user), ...budgetFields(user));
    if (typeof createdAt !== 'string') throw new NotFoundError(`user "${user.id}" does not exist`);
    if (before && (before.team ?? undefined) !== (user.team ?? undefined))
      await moveMoney(this.#redis, homeOf(before), homeOf(user), await this.#keyIds(user.id));
    await this.#writeHomeBudget(user);
    await this.#changed(user.id);
    return { ...user, created_at: createdAt };
  }

  async deleteUser(id: string): Promise<boolean> {
    await this.#beforeChange(id);
    const user = this.#cluster ? await this.getUser(id) : undefined;
    const userKeys = await scanAll(this.#redis, keys.userPattern(id));
    const records = (await this.#redis.hvals(keys.userKeys(id))).map((raw) => JSON.parse(raw) as ApiKeyRecord);
    const apiKeys = records.map((key) => keys.apiKey(key.hash));
    // Each key's own money and limits (its budget hash, ledger, holds, history, rate limits); on a
    // cluster, they and a team member's money are at the money's home.
    const money: string[] = [];
    if (user?.team) money.push(...(await scanAll(this.#redis, `${levelKeys(id, homeOf(user)).prefix}:*`)));
    for (const key of records) {
      const pattern = user ? `${levelKeys(`key:${key.id}`, homeOf(user)).prefix}:*` : keys.apiKeyLevelPattern(key.id);
      money.push(...(await scanAll(this.#redis, pattern)));
    }
    const others = [...userKeys, ...apiKeys, ...money].filter((key) => key !== keys.user(id));
    return this.#deleteRecord(keys.user(id), others, keys.users, id, id);
  }

  /**
   * Deletes a user's or team's hash, the `others` of its keys and its entry in `index`, and tells
   * the caches (`subject`); true when the hash was there. In one transaction on one Redis; on a
   * cluster, where the keys lie in several slots, one step after another.
   */
  async #deleteRecord(hash: string, others: readonly string[], index: string, id: string, subject: string): Promise<boolean> {
    let deleted: unknown;
    if (this.#cluster) {
      deleted = await this.#redis.del(hash);
      await deleteKeys(this.#redis, others);
      await this.#redis.zrem(index, id);
    } else {
      const transaction = this.#redis.multi().del(hash);
      if (others.length > 0) transaction.unlink(...others);
      transaction.zrem(index, id);
      const [[error, count] = []] = (await transaction.exec()) ?? [];
      if (error) throw error;
      deleted = count;
    }
    await this.#changed(subject);
    return deleted === 1;
  }

  /** The ids of a user's keys. */
  async #keyIds(userId: string): Promise<string[]> {
    return await this.#redis.hkeys(keys.userKeys(userId));
  }

  async addKey(key: ApiKeyRecord, maxActive?: number): Promise<void> {
    const reference = JSON.stringify({ user_id: key.user_id, key_id: key.id });
    const most = maxActive === undefined ? '' : String(maxActive);
    const args = [key.id, JSON.stringify(key), reference, most, key.created_at];
    let outcome: unknown;
    if (this.#cluster) {
      // The index entry first, refusing a hash already indexed; taken back unless the record is written.
      const indexed = await this.#redis.set(keys.apiKey(key.hash), reference, 'NX');
      outcome = indexed === null ? 'conflict' : await this.#addKey.runWithKeys([keys.user(key.user_id), keys.userKeys(key.user_id)], args);
      if (indexed !== null && outcome !== 'ok') await this.#redis.del(keys.apiKey(key.hash));
    } else outcome = await this.#addKey.runWithKeys([keys.user(key.user_id), keys.userKeys(key.user_id), keys.apiKey(key.hash)], args);
    if (outcome === 'not_found') throw new NotFoundError(`user "${key.user_id}" does not exist`);
    if (outcome === 'limit') throw new KeyLimitError(key.user_id, maxActive!);
    if (outcome === 'conflict')
      throw new ConflictError(`user "${key.user_id}" already has a key "${key.id}", or a key with this secret exists`);
    // A new key: nobody holds it yet, so its budget hash may follow the record.
    if (isKeyLevel(key)) await this.#writeBudget(await this.#keyBudget(key.user_id, key.id), keyBudgetFields(key));
  }

  /** A key's budget hash: on a cluster, at its user's money home. */
  async #keyBudget(userId: string, keyId: string): Promise<string> {
    if (!this.#cluster) return levelKeys(`key:${keyId}`).budget;
    const user = await this.getUser(userId);
    return levelKeys(`key:${keyId}`, homeOf(user ?? { id: userId, team: null })).budget;
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
      let outcome: unknown;
      if (this.#cluster) {
        // The budget hash is at the money's home, maybe another slot: written once the record is.
        outcome = await this.#replaceKey.runWithKeys([keys.userKeys(userId)], [keyId, raw, json, '', '', '', '', '']);
        if (outcome === 1 && budget) await this.#writeBudget(await this.#keyBudget(userId, keyId), keyBudgetFields(key));
      } else {
        const fields = budget ? ['1', ...keyBudgetFields(key)] : ['', '', '', '', ''];
        outcome = await this.#replaceKey.runWithKeys(
          [keys.userKeys(userId), levelKeys(`key:${keyId}`).budget],
          [keyId, raw, json, ...fields],
        );
      }
      if (outcome === 1) return key;
      if (outcome !== 0) return undefined;
    }
    throw new ConflictError(`key "${keyId}" kept changing while it was being changed: try again`);
  }

  async findKey(hash: string): Promise<FoundKey | undefined> {
    if (this.#cluster) return this.#findKeyAcrossSlots(hash);
    const found = await this.#findKey.run(keys.apiKey(hash), ...this.#templates);
    if (!Array.isArray(found)) return undefined;
    const [key, spec, createdAt, teamSpec, teamCreatedAt] = found as [string, string, string, string?, string?];
    const record = { key: JSON.parse(key) as ApiKeyRecord, user: userRecord(spec, createdAt)! };
    return teamSpec === undefined ? record : { ...record, team: teamRecord(teamSpec, teamCreatedAt!)! };
  }

  /** findKey on a cluster: the index entry, the user's key record and hash (one slot), and the team's hash, in three reads. */
  async #findKeyAcrossSlots(hash: string): Promise<FoundKey | undefined> {
    const raw = await this.#redis.get(keys.apiKey(hash));
    if (raw === null) return undefined;
    const reference = JSON.parse(raw) as { user_id: string; key_id: string };
    // The record and the user's hash share the user's slot: one round trip.
    const [key, fields] = (await this.#redis
      .multi()
      .hget(keys.userKeys(reference.user_id), reference.key_id)
      .hmget(keys.user(reference.user_id), 'spec', 'created_at')
      .exec()
      .then((replies) => (replies ?? []).map(([error, value]) => (error ? undefined : value)))) as [string | null | undefined, unknown];
    const [spec, createdAt] = (fields ?? []) as (string | null)[];
    const user = userRecord(spec ?? null, createdAt ?? null);
    if (typeof key !== 'string' || user === undefined) return undefined;
    const found = { key: JSON.parse(key) as ApiKeyRecord, user };
    if (!user.team) return found;
    const team = await this.getTeam(user.team);
    return team === undefined ? found : { ...found, team };
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
    // On a cluster the team's slot is also its members' money home (`:u:` and `:k:` keys): they stay.
    const members = keys.membersMoney(id);
    const others = (await scanAll(this.#redis, keys.teamPattern(id))).filter(
      (key) => key !== keys.team(id) && !members.some((prefix) => key.startsWith(prefix)),
    );
    return this.#deleteRecord(keys.team(id), others, keys.teams, id, `team:${id}`);
  }

  onAccountChange(listener: (subject: string | null) => void): () => void {
    return this.#channels.listen(keys.accountsChanged, listener);
  }

  caughtUp(): Promise<void> {
    return this.#channels.caughtUp(keys.accountsChanged);
  }

  /** Tells every gateway's caches that this user's record or keys (or, `team:<id>`, this team) changed. */
  async #changed(subject: string): Promise<void> {
    await this.#channels.publish(keys.accountsChanged, subject);
  }
}

/** A user's money home on a cluster (keys.ts MoneyHome): the team its spec names, whether or not that team exists. */
function homeOf(user: Pick<UserSpec, 'id' | 'team'>): MoneyHome {
  return { user: user.id, team: user.team ?? undefined };
}

type BudgetOwner = { id: string } & Pick<KeyLimits, 'budget' | 'budget_period' | 'budget_alerts' | 'soft_budget'>;

/** A budget hash's fields, as written (budgetFields). */
type BudgetFields = [budget: string, period: string, alerts: string, soft: string];

/**
 * A user's or team's hash's `budget` (micros, '' = unlimited), `period` ('' = none), `alerts`
 * (thresholds in percent, '50,80,100'; '' = none) and `soft` ('1' = alerts only), as the ledger
 * reads them.
 */
function budgetFields(owner: BudgetOwner): BudgetFields {
  const rest = [owner.budget_period ?? '', (owner.budget_alerts ?? []).join(','), owner.soft_budget ? '1' : ''] as const;
  if (owner.budget === null) return ['', ...rest];
  const parsed = parseDecimal(owner.budget, 6);
  if (!parsed.ok) throw new RangeError(`"${owner.id}": budget ${parsed.reason}`);
  return [parsed.value.toString(), ...rest];
}

/** A key's budget hash's fields, as for a user (budgetFields). */
function keyBudgetFields(key: ApiKeyRecord): BudgetFields {
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
