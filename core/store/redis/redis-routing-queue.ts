// The routing queue on Redis (docs/routing-modes.md): what gateways and router workers do to it,
// each step one script or one command. Gateways add entries to `router.<model_id>`, hear the
// answers on their reply channel, and give slots back; workers read the streams in a consumer
// group, claim what a dead worker left, and give slots to waiting requests (queue-*.lua).
import type { Redis } from 'ioredis';
import type { RedisChannels } from './redis-channels.ts';
import type {
  AssignPass,
  Cancelled,
  Enqueued,
  ProviderLive,
  QueueChoice,
  QueueForGateways,
  QueueForWorkers,
  QueueListener,
  QueueReader,
  QueueRequest,
  QueueStatistics,
  RequestStatus,
  SlotEnding,
  TakenEntry,
} from '../routing-queue.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import { QUEUE_FREED_CHANNEL, queueKeys, queueScriptParts, WORKER_GROUP } from './queue-keys.ts';

/** One class serves the three roles on one connection; each caller is handed its role's view (RedisStore.routingQueue). */
export class RedisRoutingQueue implements QueueForGateways, QueueForWorkers, QueueStatistics {
  readonly #redis: Redis;
  readonly #channels: RedisChannels;
  readonly #connection: (blockMs: number) => Redis;
  readonly #take: LuaScript;
  readonly #assign: LuaScript;
  readonly #cancel: LuaScript;
  readonly #release: LuaScript;
  readonly #renew: LuaScript;
  readonly #enqueue: LuaScript;
  readonly #status: LuaScript;

  /** `connection`: a connection of its own for a worker's blocking reads. */
  constructor(redis: Redis, channels: RedisChannels, connection: (blockMs: number) => Redis) {
    this.#redis = redis;
    this.#channels = channels;
    this.#connection = connection;
    const parts = queueScriptParts();
    this.#take = defineScript(redis, 'queue-take', 5, parts);
    this.#assign = defineScript(redis, 'queue-assign', 5, parts);
    this.#cancel = defineScript(redis, 'queue-cancel', 4, parts);
    this.#enqueue = defineScript(redis, 'queue-enqueue', 2, parts);
    this.#status = defineScript(redis, 'queue-status', 2, parts);
    this.#release = defineScript(redis, 'queue-release', 3, parts);
    this.#renew = defineScript(redis, 'queue-renew', 0, parts);
  }

  // --- gateways

  /**
   * Adds a request to its router's stream, unless `maxInStream` entries there wait for a worker
   * already (none runs, or too few): then it is refused at once, with when to come back.
   */
  async enqueue(router: string, request: QueueRequest, maxInStream: number): Promise<Enqueued> {
    const [status, detail] = (await this.#enqueue.run(
      queueKeys.stream(router),
      queueKeys.stats(router),
      maxInStream,
      Math.round(request.maxWaitMs),
      'id',
      request.id,
      'gw',
      request.gw,
      'u',
      request.caller,
      'ep',
      request.endpoint,
      'pr',
      request.priority,
      'mw',
      Math.round(request.maxWaitMs),
      'ag',
      Math.round(request.agingMs),
      'mq',
      request.maxWaiting,
      'ex',
      request.exclude.join(','),
      'st',
      Math.round(request.slotTtlMs),
    )) as [string, string];
    return status === 'full' ? { status, retryAfterSeconds: Number(detail) } : { status: 'queued', streamId: detail };
  }

  /** What became of a request (after a reconnection, when its answer may have been missed). */
  async status(router: string, requestId: string, streamId: string): Promise<RequestStatus> {
    const found = (await this.#status.run(queueKeys.stream(router), queueKeys.entries(router), requestId, streamId)) as string;
    if (found === '-') return { status: 'refused' };
    if (found === 'x' || found === 'lost') return { status: 'lost' };
    if (found === 'waiting' || found === 'queued') return { status: 'waiting' };
    return { status: 'assigned', provider: found };
  }

  /** Calls `listener` with each answer to this gateway's requests, and with null when it should re-check (after a reconnection). */
  listenReplies(gateway: string, listener: QueueListener): () => void {
    return this.#channels.listen(queueKeys.reply(gateway), listener);
  }

  async cancel(router: string, requestId: string, maxWaitMs: number): Promise<Cancelled> {
    const [status, detail] = (await this.#cancel.run(
      queueKeys.waiting(router),
      queueKeys.entries(router),
      queueKeys.stats(router),
      queueKeys.callers(router),
      requestId,
      Math.round(maxWaitMs),
    )) as [string, string];
    if (status === 'assigned') return { status, provider: detail };
    if (status === 'cancelled') return { status, retryAfterSeconds: Number(detail) };
    return { status: 'gone' };
  }

  /** Gives a slot back; resolves with whether this failure started a cool-down of the provider. */
  async release(router: string, provider: string, requestId: string, ending: SlotEnding): Promise<boolean> {
    const text = (value: number | undefined) => (value === undefined ? '' : String(Math.round(value * 1000) / 1000));
    const [, cooling] = (await this.#release.run(
      queueKeys.slots(provider),
      queueKeys.metrics(provider),
      queueKeys.recent(provider),
      requestId,
      router,
      ending.outcome,
      text(ending.ttftMs),
      text(ending.latencyMs),
      text(ending.tpotMs),
      Math.round(ending.retryAfterMs ?? 0),
      ending.threshold,
      Math.round(ending.cooldownMs),
    )) as [number, number];
    return cooling === 1;
  }

  /** Moves on the expiry of slots still in use (provider id, request id). */
  async renew(slotTtlMs: number, slots: readonly (readonly [string, string])[]): Promise<void> {
    if (slots.length === 0) return;
    await this.#renew.run(slotTtlMs, ...slots.flat());
  }

  // --- workers

  /** Makes the workers' group on each stream (and the stream), reading from its start. */
  async ensureGroups(routers: readonly string[]): Promise<void> {
    for (const router of routers) {
      try {
        await this.#redis.xgroup('CREATE', queueKeys.stream(router), WORKER_GROUP, '0', 'MKSTREAM');
      } catch (error) {
        if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error;
      }
    }
  }

  /** A reader on a connection of its own: its reads block up to `blockMs`. */
  reader(blockMs: number): QueueReader {
    const connection = this.#connection(blockMs);
    return {
      read: (consumer, routers, count, block) => this.read(connection, consumer, routers, count, block),
      get connected() {
        return connection.status === 'ready';
      },
      close: () => connection.disconnect(),
    };
  }

  /**
   * Waits up to `blockMs` for new entries of the routers' streams, on `reader` (a connection of
   * its own: it blocks). Entries are grouped by router.
   */
  async read(
    reader: Redis,
    consumer: string,
    routers: readonly string[],
    count: number,
    blockMs: number,
  ): Promise<Map<string, TakenEntry[]>> {
    const streams = routers.map((router) => queueKeys.stream(router));
    const reply = (await reader.xreadgroup(
      'GROUP',
      WORKER_GROUP,
      consumer,
      'COUNT',
      count,
      'BLOCK',
      blockMs,
      'STREAMS',
      ...streams,
      ...streams.map(() => '>'),
    )) as [string, [string, string[]][]][] | null;
    const byRouter = new Map<string, TakenEntry[]>();
    for (const [stream, entries] of reply ?? []) {
      byRouter.set(
        stream.slice('router.'.length),
        entries.map(([sid, fields]) => entryOf(sid, fields)),
      );
    }
    return byRouter;
  }

  /** Takes over the router's entries read by a worker but left unanswered longer than `minIdleMs` (a worker that died). */
  async claim(router: string, consumer: string, minIdleMs: number, count: number): Promise<TakenEntry[]> {
    const [, entries] = (await this.#redis.xautoclaim(
      queueKeys.stream(router),
      WORKER_GROUP,
      consumer,
      minIdleMs,
      '0-0',
      'COUNT',
      count,
    )) as [string, ([string, string[]] | null)[]];
    return entries.filter((entry) => entry !== null).map(([sid, fields]) => entryOf(sid, fields));
  }

  async take(router: string, choice: QueueChoice, entries: readonly TakenEntry[]): Promise<AssignPass> {
    const reply = await this.#take.run(...this.#routerKeys(router), WORKER_GROUP, JSON.stringify(choice), JSON.stringify(entries));
    return passOf(reply);
  }

  async assign(router: string, choice: QueueChoice): Promise<AssignPass> {
    return passOf(await this.#assign.run(...this.#routerKeys(router), JSON.stringify(choice)));
  }

  /** Calls `listener` with the router of each slot that came free, and with null when every router should be looked at again. */
  listenFreed(listener: QueueListener): () => void {
    return this.#channels.listen(QUEUE_FREED_CHANNEL, listener);
  }

  // --- both, and the operator

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
        coolingUntil: num('cool') ?? 0,
        ttftMs: num('ttft'),
        latencyMs: num('latency'),
        tpotMs: num('tpot'),
        errorRate: num('errors'),
        timeoutRate: num('timeouts'),
        limited: num('limited') ?? 0,
        ttftP95Ms: recent.length > 0 ? recent[Math.min(recent.length - 1, Math.floor(recent.length * 0.95))] : undefined,
      });
    });
    return live;
  }

  #routerKeys(router: string): [string, string, string, string, string] {
    return [
      queueKeys.stream(router),
      queueKeys.waiting(router),
      queueKeys.entries(router),
      queueKeys.stats(router),
      queueKeys.callers(router),
    ];
  }
}

function entryOf(sid: string, fields: readonly string[]): TakenEntry {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  const int = (value: string | undefined, fallback: number) => {
    const n = Number(value);
    return Number.isFinite(n) ? Math.trunc(n) : fallback;
  };
  return {
    sid,
    id: f.id ?? sid,
    gw: f.gw ?? '',
    u: f.u ?? '',
    ep: f.ep ?? '',
    pr: int(f.pr, 0),
    mw: int(f.mw, 30_000),
    ag: int(f.ag, 0),
    mq: int(f.mq, 1000),
    ex: f.ex ? f.ex.split(',') : [],
    st: int(f.st, 30_000),
  };
}

function passOf(reply: unknown): AssignPass {
  const [given, waiting, wake, now] = reply as [number, number, number, number];
  return { given, waiting, wake, now };
}
