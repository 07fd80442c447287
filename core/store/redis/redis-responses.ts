// Stored responses on Redis: one string per response under the user's prefix (keys.storedResponse),
// expiring with the usage retention, and gone with the user. The user's index and sizes let the
// oldest go when the user's stored responses pass the limits (lua/response-write.lua): the script
// takes them out of the index and sizes, and names them; their keys are deleted right after it (a
// response let go stays readable by its id for that moment, and until its expiry if the gateway
// dies in between; it no longer counts toward the limits).
import type { RedisClient } from './redis-client.ts';
import { DEFAULT_RESPONSE_LIMITS, readResponse, type ReadResponse, type ResponseLimits, type ResponseStore } from '../responses.ts';
import { keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';

export class RedisResponses implements ResponseStore {
  readonly #redis: RedisClient;
  readonly #retentionMs: number;
  readonly #limits: ResponseLimits;
  readonly #write: LuaScript;

  constructor(redis: RedisClient, retentionMs: number, limits: ResponseLimits = DEFAULT_RESPONSE_LIMITS) {
    this.#redis = redis;
    this.#retentionMs = retentionMs;
    this.#limits = limits;
    this.#write = defineScript(redis, 'response-write', 3);
  }

  async put(userId: string, id: string, json: string): Promise<void> {
    const { bytesPerUser, countPerUser } = this.#limits;
    const gone = (await this.#write.run(
      ...this.#keys(userId, id),
      'put',
      id,
      json,
      this.#retentionMs,
      bytesPerUser,
      countPerUser,
    )) as string[];
    // All under the user's hash tag: one slot, one command.
    if (gone.length > 0) await this.#redis.del(...gone.map((old) => keys.storedResponse(userId, old)));
  }

  async get(userId: string, id: string): Promise<ReadResponse | undefined> {
    const raw = await this.#redis.get(keys.storedResponse(userId, id));
    return raw === null ? undefined : readResponse(raw);
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (await this.#write.run(...this.#keys(userId, id), 'delete', id)) === 1;
  }

  #keys(userId: string, id: string): [string, string, string] {
    return [keys.storedResponse(userId, id), keys.storedResponseIndex(userId), keys.storedResponseSizes(userId)];
  }
}
