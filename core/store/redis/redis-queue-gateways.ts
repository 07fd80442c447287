// What a gateway does to the routing queue on Redis (docs/routing-modes.md), each step one script
// or one command: it adds its requests to their router's stream `router.<model_id>`, hears the
// workers' answers on its reply channel, asks what became of a request after a reconnection,
// gives up waiting, and gives slots back with how the provider did (queue-*.lua).
import type { RedisClient } from './redis-client.ts';
import type { RedisChannels } from './redis-channels.ts';
import type { CoolingPolicy } from '../provider-health.ts';
import type { Cancelled, Enqueued, QueueForGateways, QueueListener, QueueRequest, RequestStatus, SlotEnding } from '../routing-queue.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import { queueKeys, queueScriptParts } from './queue-keys.ts';

export class RedisQueueGateways implements QueueForGateways {
  readonly #channels: RedisChannels;
  readonly #enqueue: LuaScript;
  readonly #status: LuaScript;
  readonly #cancel: LuaScript;
  readonly #release: LuaScript;
  readonly #renew: LuaScript;

  constructor(redis: RedisClient, channels: RedisChannels) {
    this.#channels = channels;
    const parts = queueScriptParts();
    this.#enqueue = defineScript(redis, 'queue-enqueue', 2, parts);
    this.#status = defineScript(redis, 'queue-status', 2, parts);
    this.#cancel = defineScript(redis, 'queue-cancel', 4, parts);
    this.#release = defineScript(redis, 'queue-release', 3, parts);
    this.#renew = defineScript(redis, 'queue-renew', 0, parts);
  }

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
      ...(request.traceparent === undefined ? [] : ['tp', request.traceparent]),
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
  async release(router: string, provider: string, requestId: string, ending: SlotEnding, cooling: CoolingPolicy): Promise<boolean> {
    const text = (value: number | undefined) => (value === undefined ? '' : String(Math.round(value * 1000) / 1000));
    const [, started] = (await this.#release.run(
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
      cooling.threshold,
      Math.round(cooling.cooldownMs),
    )) as [number, number];
    return started === 1;
  }

  /** Moves on the expiry of slots still in use (provider id, request id). */
  async renew(slotTtlMs: number, slots: readonly (readonly [string, string])[]): Promise<void> {
    if (slots.length === 0) return;
    await this.#renew.run(slotTtlMs, ...slots.flat());
  }
}
