// Stored responses on Redis: one string per response under the user's prefix (keys.storedResponse),
// expiring with the usage retention, and gone with the user.
import type { Redis } from 'ioredis';
import type { ResponseStore, StoredResponse } from '../responses.ts';
import { keys } from './keys.ts';

export class RedisResponses implements ResponseStore {
  readonly #redis: Redis;
  readonly #retentionMs: number;

  constructor(redis: Redis, retentionMs: number) {
    this.#redis = redis;
    this.#retentionMs = retentionMs;
  }

  async put(userId: string, id: string, stored: StoredResponse): Promise<void> {
    await this.#redis.set(keys.storedResponse(userId, id), JSON.stringify(stored), 'PX', this.#retentionMs);
  }

  async get(userId: string, id: string): Promise<StoredResponse | undefined> {
    const raw = await this.#redis.get(keys.storedResponse(userId, id));
    return raw === null ? undefined : (JSON.parse(raw) as StoredResponse);
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (await this.#redis.del(keys.storedResponse(userId, id))) === 1;
  }
}
