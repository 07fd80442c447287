// Provider health on Redis: the health fields of each provider's hash (provider-fields.ts), which
// queue mode's scripts read and write through the same declaration (lua/health-common.lua), named
// as the queue's (queue-keys.ts: on a cluster in the provider's router's slot): the
// cool-down (a breaker a gateway opened, or the queue's own), the health checks' verdict and its
// reason and time. Changes are published on one channel, `id|open|<until>|<reason>`, `id|closed`,
// `id|up` or `id|down|<reason>`, so every gateway follows at once; a provider that comes back
// publishes its router on the queue's freed channel, so that its waiting requests (queue mode) go.
import type { RedisClient } from './redis-client.ts';
import type { ProviderCondition, ProviderHealthStore, ProviderNotice, ProviderRef } from '../provider-health.ts';
import type { RedisChannels } from './redis-channels.ts';
import { HEALTH_FIELDS as H, PROVIDER_HEALTH_CHANNEL, probeKey, providerFieldsPrelude } from './provider-fields.ts';
import { QUEUE_FREED_CHANNEL, type QueueKeyNames } from './queue-keys.ts';
import { scriptBySha } from './scripts.ts';
import { pipelined } from './redis-client.ts';

export class RedisProviderHealth implements ProviderHealthStore {
  readonly #redis: RedisClient;
  readonly #channels: RedisChannels;
  readonly #names: QueueKeyNames;
  // Sent by digest: defined on the shared client they would ride along every pipeline it makes.
  readonly #open: ReturnType<typeof scriptBySha>;
  readonly #claim: ReturnType<typeof scriptBySha>;

  constructor(redis: RedisClient, channels: RedisChannels, names: QueueKeyNames) {
    this.#redis = redis;
    this.#channels = channels;
    this.#names = names;
    const parts = { prelude: providerFieldsPrelude(), before: ['health-common'] };
    this.#open = scriptBySha(redis, 'health-open', 1, parts);
    this.#claim = scriptBySha(redis, 'health-claim-probe', 1);
  }

  async open(provider: ProviderRef, until: number, reason: string): Promise<void> {
    await this.#open.run(this.#metrics(provider), provider.id, until, reason);
  }

  async close(provider: ProviderRef): Promise<void> {
    const { id, router } = provider;
    await this.#redis
      .multi()
      .hset(this.#metrics(provider), H.coolUntil, 0, H.failsInRow, 0)
      .publish(PROVIDER_HEALTH_CHANNEL, `${id}|closed`)
      .publish(QUEUE_FREED_CHANNEL, router)
      .exec();
  }

  async reportHealth(provider: ProviderRef, healthy: boolean, reason: string | null, at: number): Promise<void> {
    const { id, router } = provider;
    const key = this.#metrics(provider);
    const multi = this.#redis.multi().hset(key, H.down, healthy ? '0' : '1', H.checkedAt, at);
    if (healthy) multi.hdel(key, H.reason).publish(PROVIDER_HEALTH_CHANNEL, `${id}|up`).publish(QUEUE_FREED_CHANNEL, router);
    else multi.hset(key, H.reason, reason ?? '').publish(PROVIDER_HEALTH_CHANNEL, `${id}|down|${reason ?? ''}`);
    await multi.exec();
  }

  async forgetHealth(provider: ProviderRef): Promise<void> {
    await this.#redis.hdel(this.#metrics(provider), H.down, H.checkedAt);
  }

  async read(providers: readonly ProviderRef[]): Promise<Map<string, ProviderCondition>> {
    // One pipeline; on a cluster one a slot (a router's providers share one).
    const metrics = (provider: ProviderRef) => this.#metrics(provider);
    const replies = await pipelined(this.#redis, providers, metrics, (pipeline, provider) =>
      pipeline.hmget(metrics(provider), H.coolUntil, H.down, H.reason, H.checkedAt),
    );
    const conditions = new Map<string, ProviderCondition>();
    providers.forEach(({ id }, i) => {
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

  #metrics({ router, id }: ProviderRef): string {
    return this.#names.metrics(router, id);
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
