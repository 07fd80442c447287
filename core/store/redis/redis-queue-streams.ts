// Reading the routers' streams (`router.<name>`, named by the spec) in the workers' consumer
// group: what a read and a claim of a dead worker's entries give back, as the scripts take it.
import type { RedisClient } from './redis-client.ts';
import type { TakenEntry } from '../routing-queue.ts';
import { WORKER_GROUP, type QueueKeyNames } from './queue-keys.ts';

/**
 * Waits up to `blockMs` for new entries of the routers' streams, on `reader` (a connection of
 * its own: it blocks). Entries are grouped by router.
 */
export async function readStreams(
  reader: RedisClient,
  names: QueueKeyNames,
  consumer: string,
  routers: readonly string[],
  count: number,
  blockMs: number,
): Promise<Map<string, TakenEntry[]>> {
  const streams = routers.map((router) => names.stream(router));
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

export function entryOf(sid: string, fields: readonly string[]): TakenEntry {
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
