// What a router worker does to the routing queue on Redis (docs/routing-modes.md): it reads the
// routers' streams in the workers' consumer group (on a connection of its own: the reads block),
// claims what a dead worker left, takes the entries it read into the waiting lists and gives
// slots to waiting requests (queue-take.lua, queue-assign.lua), woken by slots coming free.
// On a cluster each router's stream is in a slot of its own: the reads are a router's each
// (redis-queue-cluster-reader.ts), and the engines' readings, in one hash elsewhere, are read
// before a pass and counted after it.
import type { RedisClient } from './redis-client.ts';
import type { RedisChannels } from './redis-channels.ts';
import type { AssignPass, QueueChoice, QueueForWorkers, QueueListener, QueueReader, TakenEntry, TracedAnswer } from '../routing-queue.ts';
import { engineSignalFields } from './redis-engine-signals.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import { QUEUE_FREED_CHANNEL, queueScriptParts, routerScriptKeys, WORKER_GROUP, type QueueKeyNames } from './queue-keys.ts';
import { ClusterStreamReader } from './redis-queue-cluster-reader.ts';
import { entryOf, readStreams } from './redis-queue-streams.ts';
import { keys } from './keys.ts';

export class RedisQueueWorkers implements QueueForWorkers {
  readonly #redis: RedisClient;
  readonly #names: QueueKeyNames;
  readonly #channels: RedisChannels;
  readonly #connection: (blockMs: number) => RedisClient;
  readonly #take: LuaScript;
  readonly #assign: LuaScript;

  /** `connection`: a connection of its own for a worker's blocking reads. */
  constructor(redis: RedisClient, channels: RedisChannels, names: QueueKeyNames, connection: (blockMs: number) => RedisClient) {
    this.#redis = redis;
    this.#channels = channels;
    this.#names = names;
    this.#connection = connection;
    const parts = queueScriptParts(names.layout);
    this.#take = defineScript(redis, 'queue-take', undefined, parts);
    this.#assign = defineScript(redis, 'queue-assign', undefined, parts);
  }

  /** Makes the workers' group on each stream (and the stream), reading from its start. */
  async ensureGroups(routers: readonly string[]): Promise<void> {
    for (const router of routers) {
      try {
        await this.#redis.xgroup('CREATE', this.#names.stream(router), WORKER_GROUP, '0', 'MKSTREAM');
      } catch (error) {
        if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error;
      }
    }
  }

  /** A reader on a connection of its own: its reads block up to `blockMs`. */
  reader(blockMs: number): QueueReader {
    if (this.#names.layout === 'cluster') return new ClusterStreamReader(() => this.#connection(blockMs), this.#names);
    const connection = this.#connection(blockMs);
    return {
      read: (consumer, routers, count, block) => readStreams(connection, this.#names, consumer, routers, count, block),
      get connected() {
        return connection.status === 'ready';
      },
      close: () => connection.disconnect(),
    };
  }

  /** Takes over the router's entries read by a worker but left unanswered longer than `minIdleMs` (a worker that died). */
  async claim(router: string, consumer: string, minIdleMs: number, count: number): Promise<TakenEntry[]> {
    const [, entries] = (await this.#redis.xautoclaim(
      this.#names.stream(router),
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
    return this.#pass(this.#take, router, choice, [WORKER_GROUP], [JSON.stringify(entries)]);
  }

  async assign(router: string, choice: QueueChoice): Promise<AssignPass> {
    return this.#pass(this.#assign, router, choice, [], []);
  }

  async #pass(script: LuaScript, router: string, choice: QueueChoice, before: string[], after: string[]): Promise<AssignPass> {
    const scriptKeys = routerScriptKeys(
      this.#names,
      router,
      choice.providers.map((provider) => provider.id),
    );
    const signals = this.#names.layout === 'cluster' ? await this.#readSignals(choice) : undefined;
    const pass = passOf(await script.runWithKeys(scriptKeys, [...before, choiceArgument(choice, signals), ...after]));
    if (pass.sent.length > 0) await this.#countSent(pass.sent);
    return pass;
  }

  /** On a cluster, the engines' readings the pass weighs: the two fields of each engine (reading, sent since). */
  async #readSignals(choice: QueueChoice): Promise<Map<string, string | null> | undefined> {
    const fields = choice.providers.flatMap(({ engine }) => {
      if (!engine) return [];
      const { reading, sent } = engineSignalFields(engine.target);
      return [reading, sent];
    });
    if (fields.length === 0) return undefined;
    const values = await this.#redis.hmget(keys.engineSignals, ...fields);
    return new Map(fields.map((field, i) => [field, values[i] ?? null]));
  }

  /** On a cluster, the requests the pass sent to engines, counted where every gateway reads them (as the script does on one Redis). */
  async #countSent(fields: readonly string[]): Promise<void> {
    const multi = this.#redis.multi();
    for (const field of fields) multi.hincrby(keys.engineSignals, field, 1);
    await multi.exec();
  }

  /** Calls `listener` with the router of each slot that came free, and with null when every router should be looked at again. */
  listenFreed(listener: QueueListener): () => void {
    return this.#channels.listen(QUEUE_FREED_CHANNEL, listener);
  }
}

/**
 * The choice as the scripts read it: a provider's engine becomes the fields of its reading and of
 * the requests sent since in keys.engineSignals (eng = {f, n, mw, mkv}), and on a cluster what
 * the worker read of them (r, s); the rest as is.
 */
function choiceArgument(choice: QueueChoice, signals?: ReadonlyMap<string, string | null>): string {
  const providers = choice.providers.map(({ engine, ...provider }) => {
    if (!engine) return provider;
    const fields = engineSignalFields(engine.target);
    const read = signals && { r: signals.get(fields.reading) ?? undefined, s: signals.get(fields.sent) ?? undefined };
    return { ...provider, eng: { f: fields.reading, n: fields.sent, mw: engine.maxWaiting, mkv: engine.maxKvCache, ...read } };
  });
  return JSON.stringify({ ...choice, providers });
}

/**
 * A pass as the scripts return it: {given, waiting, wake, now, traced, sent}, traced flat (id,
 * traceparent, outcome, provider, waited ms); sent, on a cluster, the engine fields to count.
 */
function passOf(reply: unknown): AssignPass & { sent: string[] } {
  const [given, waiting, wake, now, flat = [], sent = []] = reply as [number, number, number, number, (string | number)[]?, string[]?];
  const traced: TracedAnswer[] = [];
  for (let i = 0; i + 4 < flat.length; i += 5) {
    traced.push({
      requestId: String(flat[i]),
      traceparent: String(flat[i + 1]),
      outcome: flat[i + 2] === 'ok' ? 'ok' : flat[i + 2] === 'busy' ? 'busy' : 'none',
      provider: flat[i + 3] === '' ? undefined : String(flat[i + 3]),
      waitedMs: Number(flat[i + 4]),
    });
  }
  return { given, waiting, wake, now, traced, sent };
}
