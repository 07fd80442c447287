// Users and API keys on Redis (key layout in keys.ts). The user hash carries, beside the spec,
// the two fields the ledger's scripts read: `budget` in micro-units and `period`.
//
// The scripts that create a user (user hash + users index), add a key (user's keys + the key
// index) and find a key touch keys in different cluster slots: this store needs one Redis
// server (with replicas if you like), not a Redis Cluster.
import type { Redis } from 'ioredis';
import type { UserSpec } from '../../resources/user.ts';
import { parseDecimal } from '../../money/decimal.ts';
import type { AccountStore, ApiKeyRecord, Page, UserRecord } from '../accounts.ts';
import { ConflictError, KeyLimitError, NotFoundError } from '../store-errors.ts';
import { byCreation, checkLimit } from '../paging.ts';
import { keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import type { RedisChannels } from './redis-channels.ts';

/** How many keys one SCAN step asks for when deleting a user. */
const SCAN_COUNT = 1000;

export class RedisAccounts implements AccountStore {
  readonly #redis: Redis;
  readonly #createUser: LuaScript;
  readonly #updateUser: LuaScript;
  readonly #addKey: LuaScript;
  readonly #revokeKey: LuaScript;
  readonly #findKey: LuaScript;
  /** Prefix and suffix of a user hash's and a user's keys hash's names, for key-find.lua. */
  readonly #templates = [...template(keys.user), ...template(keys.userKeys)];

  readonly #channels: RedisChannels;
  readonly #beforeChange: (userId: string) => Promise<unknown>;

  /** `beforeChange` runs before a user is updated or deleted (the ledger gives back this gateway's leases). */
  constructor(redis: Redis, channels: RedisChannels, beforeChange: (userId: string) => Promise<unknown> = async () => {}) {
    this.#redis = redis;
    this.#channels = channels;
    this.#beforeChange = beforeChange;
    this.#createUser = defineScript(redis, 'user-create', 2);
    this.#updateUser = defineScript(redis, 'user-update', 1);
    this.#addKey = defineScript(redis, 'key-add', 3);
    this.#revokeKey = defineScript(redis, 'key-revoke', 1);
    this.#findKey = defineScript(redis, 'key-find', 1);
  }

  async createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    const created_at = now.toISOString();
    const created = await this.#createUser.run(
      keys.user(user.id),
      keys.users,
      user.id,
      JSON.stringify(user),
      created_at,
      ...budgetFields(user),
    );
    if (created !== 1) throw new ConflictError(`user "${user.id}" already exists`);
    return { ...user, created_at };
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    const [spec, createdAt] = await this.#redis.hmget(keys.user(id), 'spec', 'created_at');
    return userRecord(spec ?? null, createdAt ?? null);
  }

  async listUsers(after: string | null, limit: number): Promise<Page<UserRecord>> {
    checkLimit(limit);
    const ids = await this.#redis.zrangebylex(keys.users, after === null ? '-' : `(${after}`, '+', 'LIMIT', 0, limit + 1);
    const page = ids.slice(0, limit);
    const pipeline = this.#redis.pipeline();
    for (const id of page) pipeline.hmget(keys.user(id), 'spec', 'created_at');
    const replies = page.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    const items: UserRecord[] = [];
    for (const [error, fields] of replies) {
      if (error) throw error;
      const [spec, createdAt] = fields as (string | null)[];
      // A user deleted between the two reads is simply not listed.
      const user = userRecord(spec ?? null, createdAt ?? null);
      if (user) items.push(user);
    }
    return { items, next: ids.length > limit ? page[page.length - 1]! : null };
  }

  async updateUser(user: UserSpec): Promise<UserRecord> {
    await this.#beforeChange(user.id);
    const createdAt = await this.#updateUser.run(keys.user(user.id), JSON.stringify(user), ...budgetFields(user));
    if (typeof createdAt !== 'string') throw new NotFoundError(`user "${user.id}" does not exist`);
    await this.#changed(user.id);
    return { ...user, created_at: createdAt };
  }

  async deleteUser(id: string): Promise<boolean> {
    await this.#beforeChange(id);
    const userKeys = await this.#scan(keys.userPattern(id));
    const apiKeys = (await this.#redis.hvals(keys.userKeys(id))).map((raw) => keys.apiKey((JSON.parse(raw) as ApiKeyRecord).hash));
    const others = [...userKeys, ...apiKeys].filter((key) => key !== keys.user(id));
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
  }

  async listKeys(userId: string): Promise<ApiKeyRecord[]> {
    const raw = await this.#redis.hvals(keys.userKeys(userId));
    return raw.map((json) => JSON.parse(json) as ApiKeyRecord).sort(byCreation);
  }

  async revokeKey(userId: string, keyId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    const raw = await this.#revokeKey.run(keys.userKeys(userId), keyId, now.toISOString());
    if (typeof raw !== 'string') return undefined;
    await this.#changed(userId);
    return JSON.parse(raw) as ApiKeyRecord;
  }

  async findKey(hash: string): Promise<{ key: ApiKeyRecord; user: UserRecord } | undefined> {
    const found = await this.#findKey.run(keys.apiKey(hash), ...this.#templates);
    if (!Array.isArray(found)) return undefined;
    const [key, spec, createdAt] = found as [string, string, string];
    return { key: JSON.parse(key) as ApiKeyRecord, user: userRecord(spec, createdAt)! };
  }

  onAccountChange(listener: (userId: string | null) => void): () => void {
    return this.#channels.listen(keys.accountsChanged, listener);
  }

  /** Tells every gateway's caches that this user's record or keys changed. */
  async #changed(userId: string): Promise<void> {
    await this.#redis.publish(keys.accountsChanged, userId);
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

/** The user hash's `budget` (micros, '' = unlimited) and `period` ('' = none), as the ledger reads them. */
function budgetFields(user: UserSpec): [budget: string, period: string] {
  if (user.budget === null) return ['', user.budget_period ?? ''];
  const parsed = parseDecimal(user.budget, 6);
  if (!parsed.ok) throw new RangeError(`user "${user.id}": budget ${parsed.reason}`);
  return [parsed.value.toString(), user.budget_period ?? ''];
}

function userRecord(spec: string | null, createdAt: string | null): UserRecord | undefined {
  if (spec === null || createdAt === null) return undefined;
  return { ...(JSON.parse(spec) as UserSpec), created_at: createdAt };
}

/** A key name function split around the id: [prefix, suffix]. */
function template(name: (id: string) => string): [string, string] {
  const marker = '\u0000';
  const [prefix = '', suffix = ''] = name(marker).split(marker);
  return [prefix, suffix];
}
