// Provider health on Redis: the health fields of each provider's hash (provider-fields.ts), which
// queue mode's scripts read and write through the same declaration (lua/health-common.lua): the
// cool-down (a breaker a gateway opened, or the queue's own), the health checks' verdict and its
// reason and time. Changes are published on one channel, `id|open|<until>|<reason>`, `id|closed`,
// `id|up` or `id|down|<reason>`, so every gateway follows at once; a provider that comes back
// publishes its router on the queue's freed channel, so that its waiting requests (queue mode) go.
import type { RedisClient } from './redis-client.ts';
import type { ProviderCondition, ProviderHealthStore, ProviderNotice } from '../provider-health.ts';
import type { RedisChannels } from './redis-channels.ts';
import { HEALTH_FIELDS as H, PROVIDER_HEALTH_CHANNEL, probeKey, providerFieldsPrelude } from './provider-fields.ts';
import { QUEUE_FREED_CHANNEL, queueKeys } from './queue-keys.ts';
import { scriptBySha } from './scripts.ts';

export class RedisProviderHealth implements ProviderHealthStore {
  readonly #redis: RedisClient;
  readonly #channels: RedisChannels;
  // Sent by digest: defined on the shared client they would ride along every pipeline it makes.
  readonly #open: ReturnType<typeof scriptBySha>;
  readonly #claim: ReturnType<typeof scriptBySha>;

  constructor(redis: RedisClient, channels: RedisChannels) {
    this.#redis = redis;
    this.#channels = channels;
    const parts = { prelude: providerFieldsPrelude(), before: ['health-common'] };
    this.#open = scriptBySha(redis, 'health-open', 1, parts);
    this.#claim = scriptBySha(redis, 'health-claim-probe', 1);
  }

  async open(id: string, until: number, reason: string): Promise<void> {
    await this.#open.run(queueKeys.metrics(id), id, until, reason);
  }

  async close(id: string, router: string): Promise<void> {
    await this.#redis
      .multi()
      .hset(queueKeys.metrics(id), H.coolUntil, 0, H.failsInRow, 0)
      .publish(PROVIDER_HEALTH_CHANNEL, `${id}|closed`)
      .publish(QUEUE_FREED_CHANNEL, router)
      .exec();
  }

  async reportHealth(id: string, router: string, healthy: boolean, reason: string | null, at: number): Promise<void> {
    const key = queueKeys.metrics(id);
    const multi = this.#redis.multi().hset(key, H.down, healthy ? '0' : '1', H.checkedAt, at);
    if (healthy) multi.hdel(key, H.reason).publish(PROVIDER_HEALTH_CHANNEL, `${id}|up`).publish(QUEUE_FREED_CHANNEL, router);
    else multi.hset(key, H.reason, reason ?? '').publish(PROVIDER_HEALTH_CHANNEL, `${id}|down|${reason ?? ''}`);
    await multi.exec();
  }

  async forgetHealth(id: string): Promise<void> {
    await this.#redis.hdel(queueKeys.metrics(id), H.down, H.checkedAt);
  }

  async read(ids: readonly string[]): Promise<Map<string, ProviderCondition>> {
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hmget(queueKeys.metrics(id), H.coolUntil, H.down, H.reason, H.checkedAt);
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
    const claimed = await this.#claim.run(probeKey(id), owner, Math.max(1, Math.round(ttlMs)));
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
