// Provider health on Redis, in the fields of each provider's metrics hash that queue mode's
// scripts read too (queue-keys.ts, queue-common.lua): `cool` (no requests before this time: a
// cool-down, or a breaker a gateway opened), `down` ('1' while health checks fail), `why`
// (the reason) and `checked` (the last verdict's time). Changes are published on one channel,
// `id|open|<until>|<reason>`, `id|closed`, `id|up` or `id|down|<reason>`, so every gateway
// follows at once; a provider that comes back publishes its router on the queue's freed channel,
// so that its waiting requests (queue mode) go.
import type { Redis } from 'ioredis';
import type { ProviderCondition, ProviderHealthStore, ProviderNotice } from '../provider-health.ts';
import type { RedisChannels } from './redis-channels.ts';
import { QUEUE_FREED_CHANNEL, queueKeys } from './queue-keys.ts';

export const PROVIDER_HEALTH_CHANNEL = 'tg:provider-health';
const probeKey = (id: string) => `tg:p:{p:${id}}:probe`;
const CLAIM =
  "local holder = redis.call('GET', KEYS[1]) if holder and holder ~= ARGV[1] then return 0 end redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1";

export class RedisProviderHealth implements ProviderHealthStore {
  readonly #redis: Redis;
  readonly #channels: RedisChannels;

  constructor(redis: Redis, channels: RedisChannels) {
    this.#redis = redis;
    this.#channels = channels;
  }

  async open(id: string, until: number, reason: string): Promise<void> {
    const key = queueKeys.metrics(id);
    // Never shortens an opening or a cool-down already longer.
    await this.#redis
      .multi()
      .hset(key, 'why', reason)
      .eval(
        "if (tonumber(redis.call('HGET', KEYS[1], 'cool')) or 0) < tonumber(ARGV[1]) then redis.call('HSET', KEYS[1], 'cool', ARGV[1]) end",
        1,
        key,
        until,
      )
      .publish(PROVIDER_HEALTH_CHANNEL, `${id}|open|${until}|${reason}`)
      .exec();
  }

  async close(id: string, router: string): Promise<void> {
    await this.#redis
      .multi()
      .hset(queueKeys.metrics(id), 'cool', 0, 'fails', 0)
      .publish(PROVIDER_HEALTH_CHANNEL, `${id}|closed`)
      .publish(QUEUE_FREED_CHANNEL, router)
      .exec();
  }

  async reportHealth(id: string, router: string, healthy: boolean, reason: string | null, at: number): Promise<void> {
    const key = queueKeys.metrics(id);
    const multi = this.#redis.multi().hset(key, 'down', healthy ? '0' : '1', 'checked', at);
    if (healthy) multi.hdel(key, 'why').publish(PROVIDER_HEALTH_CHANNEL, `${id}|up`).publish(QUEUE_FREED_CHANNEL, router);
    else multi.hset(key, 'why', reason ?? '').publish(PROVIDER_HEALTH_CHANNEL, `${id}|down|${reason ?? ''}`);
    await multi.exec();
  }

  async forgetHealth(id: string): Promise<void> {
    await this.#redis.hdel(queueKeys.metrics(id), 'down', 'checked');
  }

  async read(ids: readonly string[]): Promise<Map<string, ProviderCondition>> {
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hmget(queueKeys.metrics(id), 'cool', 'down', 'why', 'checked');
    const replies = (await pipeline.exec()) ?? [];
    const conditions = new Map<string, ProviderCondition>();
    ids.forEach((id, i) => {
      const [cool, down, why, checked] = (replies[i]?.[1] ?? []) as (string | null)[];
      conditions.set(id, {
        openUntil: Number(cool) || 0,
        healthy: down === null || down === undefined ? undefined : down !== '1',
        reason: why || null,
        checkedAt: checked ? Number(checked) : null,
      });
    });
    return conditions;
  }

  /** Taken when free, renewed when `owner` holds it already: one gateway keeps probing a provider while it lives. */
  async claimProbe(id: string, owner: string, ttlMs: number): Promise<boolean> {
    const claimed = await this.#redis.eval(CLAIM, 1, probeKey(id), owner, Math.max(1, Math.round(ttlMs)));
    return claimed === 1;
  }

  onNotice(listener: (notice: ProviderNotice | null) => void): () => void {
    return this.#channels.listen(PROVIDER_HEALTH_CHANNEL, (message) => listener(message === null ? null : parseNotice(message)));
  }
}

/** A published change; ids never hold `|`, a reason may. */
function parseNotice(message: string): ProviderNotice | null {
  const [id = '', kind, ...rest] = message.split('|');
  switch (kind) {
    case 'open':
      return { id, kind: 'open', until: Number(rest[0]) || 0, reason: rest.slice(1).join('|') };
    case 'closed':
      return { id, kind: 'closed' };
    case 'up':
      return { id, kind: 'health', healthy: true, reason: null };
    case 'down':
      return { id, kind: 'health', healthy: false, reason: rest.join('|') };
    default:
      return null;
  }
}
