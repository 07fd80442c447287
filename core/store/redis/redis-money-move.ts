// On a Redis Cluster, a user's money lives at a home (keys.ts MoneyHome): the team's slot for a
// member of a team, else the user's own. A user who changes teams has that money moved to the new
// home: the user's ledger, holds, history and rate-limit windows, and each of the user's keys'
// (their budget hashes too), each key copied with its time to live (DUMP, RESTORE) and then removed
// from the old home. The user's budget copy is written afresh at the new home by the caller.
//
// A move is not one atomic step: the two homes are in different slots, perhaps on different
// primaries. Requests admitted under the old team before every gateway heard of the change
// (milliseconds, the accounts channel) settle at the old home and are not counted at the new one
// (docs/redis.md says so).
import type { Redis } from 'ioredis';
import { levelKeys, type MoneyHome } from './keys.ts';
import { scanAll, type RedisClient } from './redis-client.ts';

/** Moves a user's money and their keys' from one home to another. */
export async function moveMoney(redis: RedisClient, from: MoneyHome, to: MoneyHome, keyIds: readonly string[]): Promise<void> {
  for (const subject of [from.user, ...keyIds.map((id) => `key:${id}`)]) {
    const source = levelKeys(subject, from);
    const target = levelKeys(subject, to);
    const names = [source.ledger, source.holds, source.history, ...(await scanAll(redis, `${source.prefix}:rl:*`))];
    // A key's budget hash moves with it; the user's is the user's own hash, or a copy the caller writes afresh.
    if (subject !== from.user) names.push(source.budget);
    else if (from.team !== undefined) await redis.del(source.budget);
    for (const name of names) await moveKey(redis, name, target.prefix + name.slice(source.prefix.length));
  }
}

/** Copies `from` to `to` with its time to live, then removes `from`. */
async function moveKey(redis: RedisClient, from: string, to: string): Promise<void> {
  const [dump, ttl] = await Promise.all([(redis as Redis).dumpBuffer(from), redis.pttl(from)]);
  if (dump === null) return;
  await redis.restore(to, Math.max(ttl, 0), dump, 'REPLACE');
  await redis.del(from);
}
