// The fleet's prefix index in Redis (core/store/prefix-index.ts): per replica a sorted set of
// block hashes scored by when they were last sent (keys.prefixIndex). A lookup is one round trip
// for all the candidates (ZMSCORE each); a record adds the chain, trims the set to its bound
// (lowest scores, the least recently sent, go first) and renews its expiry, in one pipeline.
import type { Redis } from 'ioredis';
import { DEFAULT_PREFIX_INDEX_LIMITS, leadingMatches, type PrefixIndexLimits, type PrefixIndexStore } from '../prefix-index.ts';
import { keys } from './keys.ts';

export class RedisPrefixIndex implements PrefixIndexStore {
  readonly #client: Redis;
  readonly #limits: PrefixIndexLimits;

  constructor(client: Redis, limits: PrefixIndexLimits = DEFAULT_PREFIX_INDEX_LIMITS) {
    this.#client = client;
    this.#limits = limits;
  }

  async matches(replicas: readonly string[], chain: readonly string[], now: number): Promise<number[]> {
    if (chain.length === 0 || replicas.length === 0) return replicas.map(() => 0);
    const pipeline = this.#client.pipeline();
    for (const replica of replicas) pipeline.zmscore(keys.prefixIndex(replica), ...chain);
    const results = (await pipeline.exec()) ?? [];
    const since = now - this.#limits.ttlMs;
    return replicas.map((_, i) => {
      const [error, scores] = results[i] ?? [null, []];
      if (error) throw error;
      const list = scores as (string | null)[];
      return leadingMatches(chain, (_hash, n) => list[n] !== null && list[n] !== undefined && Number(list[n]) > since);
    });
  }

  async record(replica: string, chain: readonly string[], now: number): Promise<void> {
    if (chain.length === 0) return;
    const key = keys.prefixIndex(replica);
    const members: (string | number)[] = [];
    for (const hash of chain) members.push(now, hash);
    await this.#client
      .pipeline()
      .zadd(key, ...members)
      .zremrangebyrank(key, 0, -(this.#limits.blocksPerReplica + 1))
      .pexpire(key, this.#limits.ttlMs)
      .exec();
  }
}
