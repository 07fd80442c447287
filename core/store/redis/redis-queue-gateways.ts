// What a gateway does to the routing queue on Redis (docs/routing-modes.md), each step one script
// or one command: it adds its requests to their router's stream `router.<model_id>`, hears the
// workers' answers on its reply channel, asks what became of a request after a reconnection,
// gives up waiting, and gives slots back with how the provider did (queue-*.lua). On a cluster it
// also says, for each router it sent requests to, that it still listens (queue-listening.lua).
import { bySlot, type RedisClient } from './redis-client.ts';
import type { RedisChannels } from './redis-channels.ts';
import type { CoolingPolicy } from '../provider-health.ts';
import type {
  Cancelled,
  Enqueued,
  HeldSlot,
  QueueForGateways,
  QueueListener,
  QueueRequest,
  RequestStatus,
  SlotEnding,
} from '../routing-queue.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import { LISTENING_TTL_MS, outcomeKeys, QUEUE_BOUNDS, queueScriptParts, type QueueKeyNames } from './queue-keys.ts';

export class RedisQueueGateways implements QueueForGateways {
  readonly #channels: RedisChannels;
  readonly #names: QueueKeyNames;
  readonly #enqueue: LuaScript;
  readonly #status: LuaScript;
  readonly #cancel: LuaScript;
  readonly #release: LuaScript;
  readonly #renew: LuaScript;
  readonly #listening: LuaScript;
  /** On a cluster: the routers this process sent requests to, with when it last did (ms). */
  readonly #routersUsed = new Map<string, number>();

  constructor(redis: RedisClient, channels: RedisChannels, names: QueueKeyNames) {
    this.#channels = channels;
    this.#names = names;
    const parts = queueScriptParts(names.layout);
    this.#enqueue = defineScript(redis, 'queue-enqueue', 3, parts);
    this.#status = defineScript(redis, 'queue-status', 4, parts);
    this.#cancel = defineScript(redis, 'queue-cancel', 6, parts);
    this.#release = defineScript(redis, 'queue-release', 3, parts);
    this.#renew = defineScript(redis, 'queue-renew', undefined, parts);
    this.#listening = defineScript(redis, 'queue-listening', 1, parts);
  }

  /**
   * Adds a request to its router's stream, unless `maxInStream` entries there wait for a worker
   * already (none runs, or too few): then it is refused at once, with when to come back.
   */
  async enqueue(router: string, request: QueueRequest, maxInStream: number): Promise<Enqueued> {
    if (this.#names.layout === 'cluster') this.#routersUsed.set(router, Date.now());
    const [status, detail] = (await this.#enqueue.run(
      this.#names.stream(router),
      this.#names.stats(router),
      this.#names.gateways(router),
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
      ...(request.traceparent === undefined ? [] : ['tp', request.traceparent]),
    )) as [string, string];
    return status === 'full' ? { status, retryAfterSeconds: Number(detail) } : { status: 'queued', streamId: detail };
  }

  /** What became of a request (after a reconnection, when its answer may have been missed). */
  async status(router: string, requestId: string, streamId: string): Promise<RequestStatus> {
    const found = (await this.#status.run(
      this.#names.stream(router),
      this.#names.entries(router),
      ...outcomeKeys(this.#names, router),
      requestId,
      streamId,
    )) as string;
    if (found === '-') return { status: 'refused' };
    if (found === 'x' || found === 'lost') return { status: 'lost' };
    if (found === 'waiting' || found === 'queued') return { status: 'waiting' };
    return { status: 'assigned', provider: found };
  }

  /** Calls `listener` with each answer to this gateway's requests, and with null when it should re-check (after a reconnection). */
  listenReplies(gateway: string, listener: QueueListener): () => void {
    const unlisten = this.#channels.listen(this.#names.reply(gateway), listener);
    if (this.#names.layout !== 'cluster') return unlisten;
    // PUBSUB NUMSUB answers for one node of a cluster: the gateway says it listens instead, for
    // every router it sent a request to within the longest wait (queue-enqueue.lua says it first).
    const timer = setInterval(() => this.#sayListening(gateway), LISTENING_TTL_MS / 3);
    timer.unref();
    return () => {
      clearInterval(timer);
      unlisten();
    };
  }

  #sayListening(gateway: string): void {
    const since = Date.now() - QUEUE_BOUNDS.maxWaitMs;
    for (const [router, at] of this.#routersUsed) {
      if (at < since) this.#routersUsed.delete(router);
      // A word that did not land is said again at the next turn, before the last one runs out.
      else this.#listening.run(this.#names.gateways(router), gateway).catch(() => {});
    }
  }

  async cancel(router: string, requestId: string, maxWaitMs: number): Promise<Cancelled> {
    const [status, detail] = (await this.#cancel.run(
      this.#names.waiting(router),
      this.#names.entries(router),
      this.#names.stats(router),
      this.#names.callers(router),
      ...outcomeKeys(this.#names, router),
      requestId,
      Math.round(maxWaitMs),
      router,
    )) as [string, string];
    if (status === 'assigned') return { status, provider: detail };
    if (status === 'cancelled') return { status, retryAfterSeconds: Number(detail) };
    return { status: 'gone' };
  }

  /** Gives a slot back; resolves with whether this failure started a cool-down of the provider. */
  async release(router: string, provider: string, requestId: string, ending: SlotEnding, cooling: CoolingPolicy): Promise<boolean> {
    const text = (value: number | undefined) => (value === undefined ? '' : String(Math.round(value * 1000) / 1000));
    const [, started] = (await this.#release.run(
      this.#names.slots(router, provider),
      this.#names.metrics(router, provider),
      this.#names.recent(router, provider),
      requestId,
      router,
      ending.outcome,
      text(ending.ttftMs),
      text(ending.latencyMs),
      text(ending.tpotMs),
      Math.round(ending.retryAfterMs ?? 0),
      cooling.threshold,
      Math.round(cooling.cooldownMs),
    )) as [number, number];
    return started === 1;
  }

  /** Moves on the expiry of slots still in use: one call, or on a cluster one a router (its slot). */
  async renew(slotTtlMs: number, slots: readonly HeldSlot[]): Promise<void> {
    const keyed = slots.map((slot) => ({ key: this.#names.slots(slot.router, slot.provider), id: slot.requestId }));
    const groups = this.#names.layout === 'cluster' ? bySlot(keyed, (slot) => slot.key) : [keyed];
    await Promise.all(
      groups
        .filter((group) => group.length > 0)
        .map((group) =>
          this.#renew.runWithKeys(
            group.map((slot) => slot.key),
            [slotTtlMs, ...group.map((slot) => slot.id)],
          ),
        ),
    );
  }
}
