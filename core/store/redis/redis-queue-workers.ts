// What a router worker does to the routing queue on Redis (docs/routing-modes.md): it reads the
// routers' streams in the workers' consumer group (on a connection of its own: the reads block),
// claims what a dead worker left, takes the entries it read into the waiting lists and gives
// slots to waiting requests (queue-take.lua, queue-assign.lua), woken by slots coming free.
import type { RedisClient } from './redis-client.ts';
import type { RedisChannels } from './redis-channels.ts';
import type { AssignPass, QueueChoice, QueueForWorkers, QueueListener, QueueReader, TakenEntry, TracedAnswer } from '../routing-queue.ts';
import { engineSignalFields } from './redis-engine-signals.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import { QUEUE_FREED_CHANNEL, queueKeys, queueScriptParts, WORKER_GROUP } from './queue-keys.ts';

export class RedisQueueWorkers implements QueueForWorkers {
  readonly #redis: RedisClient;
  readonly #channels: RedisChannels;
  readonly #connection: (blockMs: number) => RedisClient;
  readonly #take: LuaScript;
  readonly #assign: LuaScript;

  /** `connection`: a connection of its own for a worker's blocking reads. */
  constructor(redis: RedisClient, channels: RedisChannels, connection: (blockMs: number) => RedisClient) {
    this.#redis = redis;
    this.#channels = channels;
    this.#connection = connection;
    const parts = queueScriptParts();
    this.#take = defineScript(redis, 'queue-take', 5, parts);
    this.#assign = defineScript(redis, 'queue-assign', 5, parts);
  }

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
      read: (consumer, routers, count, block) => read(connection, consumer, routers, count, block),
      get connected() {
        return connection.status === 'ready';
      },
      close: () => connection.disconnect(),
    };
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
    const reply = await this.#take.run(...routerKeys(router), WORKER_GROUP, choiceArgument(choice), JSON.stringify(entries));
    return passOf(reply);
  }

  async assign(router: string, choice: QueueChoice): Promise<AssignPass> {
    return passOf(await this.#assign.run(...routerKeys(router), choiceArgument(choice)));
  }

  /** Calls `listener` with the router of each slot that came free, and with null when every router should be looked at again. */
  listenFreed(listener: QueueListener): () => void {
    return this.#channels.listen(QUEUE_FREED_CHANNEL, listener);
  }
}

/**
 * Waits up to `blockMs` for new entries of the routers' streams, on `reader` (a connection of
 * its own: it blocks). Entries are grouped by router.
 */
async function read(
  reader: RedisClient,
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

/**
 * The choice as the scripts read it: a provider's engine becomes the fields of its reading and of
 * the requests sent since in keys.engineSignals (eng = {f, n, mw, mkv}); the rest as is.
 */
function choiceArgument(choice: QueueChoice): string {
  const providers = choice.providers.map(({ engine, ...provider }) => {
    if (!engine) return provider;
    const fields = engineSignalFields(engine.target);
    return { ...provider, eng: { f: fields.reading, n: fields.sent, mw: engine.maxWaiting, mkv: engine.maxKvCache } };
  });
  return JSON.stringify({ ...choice, providers });
}

/** The keys of a router's queue, as queue-take.lua and queue-assign.lua take them. */
function routerKeys(router: string): [string, string, string, string, string] {
  return [
    queueKeys.stream(router),
    queueKeys.waiting(router),
    queueKeys.entries(router),
    queueKeys.stats(router),
    queueKeys.callers(router),
  ];
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
    ...(f.tp === undefined ? {} : { tp: f.tp }),
  };
}

/** A pass as the scripts return it: {given, waiting, wake, now, traced}, traced flat (id, traceparent, outcome, provider, waited ms). */
function passOf(reply: unknown): AssignPass {
  const [given, waiting, wake, now, flat = []] = reply as [number, number, number, number, (string | number)[]?];
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
  return { given, waiting, wake, now, traced };
}
