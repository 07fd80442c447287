// What the metrics, the admin API and the operator read of the routing queue on Redis: each
// router's backlog (in its stream, and waiting for a slot) and each provider's live numbers as
// every gateway wrote them (its slots in use, its hash: provider-fields.ts, the last times to
// first token). Reads only, at scrape or request time of those readers, never on a request's path.
import type { RedisClient } from './redis-client.ts';
import type { ProviderLive, QueueStatistics } from '../routing-queue.ts';
import { HEALTH_FIELDS, PERFORMANCE_FIELDS as M } from './provider-fields.ts';
import { queueKeys } from './queue-keys.ts';

export class RedisQueueStatistics implements QueueStatistics {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  /** Requests of the router in its stream not yet taken by a worker (the workers' lag), and those waiting for a slot. */
  async backlog(router: string): Promise<{ inStream: number; waiting: number }> {
    const [[, inStream], [, waiting]] = (await this.#redis
      .multi()
      .xlen(queueKeys.stream(router))
      .zcard(queueKeys.waiting(router))
      .exec()) as [[null, number], [null, number]];
    return { inStream, waiting };
  }

  /** Every request of the router not yet given a slot: in its stream, or waiting. */
  async depth(router: string): Promise<number> {
    const { inStream, waiting } = await this.backlog(router);
    return inStream + waiting;
  }

  /** The providers' live numbers, as every gateway wrote them. */
  async providers(ids: readonly string[], now: number): Promise<Map<string, ProviderLive>> {
    const pipeline = this.#redis.pipeline();
    for (const id of ids) {
      pipeline.zcount(queueKeys.slots(id), now, '+inf');
      pipeline.hgetall(queueKeys.metrics(id));
      pipeline.lrange(queueKeys.recent(id), 0, -1);
    }
    const replies = ((await pipeline.exec()) ?? []).map(([, value]) => value);
    const live = new Map<string, ProviderLive>();
    ids.forEach((id, i) => {
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
