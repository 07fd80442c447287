// What the metrics, the admin API and the operator read of the routing queue on Redis: each
// router's backlog (in its stream, and waiting for a slot) and each provider's live numbers as
// every gateway wrote them (its slots in use, its hash: provider-fields.ts, the last times to
// first token). Reads only, at scrape or request time of those readers, never on a request's path.
import { pipelined, type RedisClient } from './redis-client.ts';
import type { ProviderLive, QueueStatistics } from '../routing-queue.ts';
import type { ProviderRef } from '../provider-health.ts';
import { HEALTH_FIELDS, PERFORMANCE_FIELDS as M } from './provider-fields.ts';
import type { QueueKeyNames } from './queue-keys.ts';

export class RedisQueueStatistics implements QueueStatistics {
  readonly #redis: RedisClient;
  readonly #names: QueueKeyNames;

  constructor(redis: RedisClient, names: QueueKeyNames) {
    this.#redis = redis;
    this.#names = names;
  }

  /** Requests of the router in its stream not yet taken by a worker (the workers' lag), and those waiting for a slot. */
  async backlog(router: string): Promise<{ inStream: number; waiting: number }> {
    const [[, inStream], [, waiting]] = (await this.#redis
      .multi()
      .xlen(this.#names.stream(router))
      .zcard(this.#names.waiting(router))
      .exec()) as [[null, number], [null, number]];
    return { inStream, waiting };
  }

  /** Every request of the router not yet given a slot: in its stream, or waiting. */
  async depth(router: string): Promise<number> {
    const { inStream, waiting } = await this.backlog(router);
    return inStream + waiting;
  }

  /** The providers' live numbers, as every gateway wrote them. */
  async providers(providers: readonly ProviderRef[], now: number): Promise<Map<string, ProviderLive>> {
    // Three reads a provider, in one pipeline (on a cluster one a slot: a router's providers share one).
    const reads = providers.flatMap(({ router, id }) => [
      { key: this.#names.slots(router, id), read: 'slots' as const },
      { key: this.#names.metrics(router, id), read: 'metrics' as const },
      { key: this.#names.recent(router, id), read: 'recent' as const },
    ]);
    const replies = (
      await pipelined(
        this.#redis,
        reads,
        ({ key }) => key,
        (pipeline, { key, read }) => {
          if (read === 'slots') pipeline.zcount(key, now, '+inf');
          else if (read === 'metrics') pipeline.hgetall(key);
          else pipeline.lrange(key, 0, -1);
        },
      )
    ).map(([, value]) => value);
    const live = new Map<string, ProviderLive>();
    providers.forEach(({ id }, i) => {
      const m = replies[i * 3 + 1] as Record<string, string>;
      const num = (field: string) => (m[field] === undefined ? undefined : Number(m[field]));
      const recent = (replies[i * 3 + 2] as string[]).map(Number).sort((a, b) => a - b);
      live.set(id, {
        slotsInUse: replies[i * 3] as number,
        coolingUntil: num(HEALTH_FIELDS.coolUntil) ?? 0,
        ttftMs: num(M.ttftMs),
        latencyMs: num(M.latencyMs),
        tpotMs: num(M.tpotMs),
        errorRate: num(M.errorRate),
        timeoutRate: num(M.timeoutRate),
        limited: num(M.limited) ?? 0,
        ttftP95Ms: recent.length > 0 ? recent[Math.min(recent.length - 1, Math.floor(recent.length * 0.95))] : undefined,
      });
    });
    return live;
  }
}
