// The start-up check of the Redis layout's version (layout.ts), run by RedisStore.connect, so by
// every process that opens the store (gateway, router worker, operator), once, before it reads
// or writes anything else: a process never works on data laid out in a format it does not know.
// The version is written with SET NX, so processes starting together agree on it whoever wins.
import { anyKey, type RedisClient } from './redis-client.ts';
import { z } from 'zod';
import type { Log } from '../../log.ts';
import { DATA_PATTERN, LAYOUT_VERSION, LAYOUT_VERSION_KEY, OLDEST_READ_LAYOUT, UNVERSIONED_LAYOUT } from './layout.ts';

/** The layouts a build reads, and the one it writes (the newest). */
export interface LayoutRange {
  readonly oldest: number;
  readonly newest: number;
}

export const THIS_BUILD: LayoutRange = { oldest: OLDEST_READ_LAYOUT, newest: LAYOUT_VERSION };

/**
 * What the check found: `written`, Redis held no Tollgate data and this process wrote the
 * version; `adopted`, it held data from before the version was kept, now recorded as layout 1;
 * `current`, the version this build writes; `older`, an older one this build still reads.
 */
export type LayoutOutcome = 'written' | 'adopted' | 'current' | 'older';

export interface LayoutFound {
  readonly version: number;
  readonly outcome: LayoutOutcome;
}

/** Redis holds a layout this build does not read: the process must not start on it. */
export class RedisLayoutError extends Error {
  override name = 'RedisLayoutError';
  /** The stored version, as it was found. */
  readonly found: string;
  /** The message without its subject, for a caller that names the Redis: "holds Tollgate layout 3; ...". */
  readonly problem: string;
  constructor(found: string, build: LayoutRange) {
    const problem = refusal(found, build);
    super(`Redis ${problem}`);
    this.found = found;
    this.problem = problem;
  }
}

/** The commands the check uses. */

/** A version as stored: a positive decimal integer, nothing else. */
const StoredVersion = z
  .string()
  .regex(/^[1-9][0-9]{0,8}$/)
  .transform(Number);

/** Reads of the version: a second one follows a SET NX lost to another process; a third, only Redis flushed in between. */
const ATTEMPTS = 3;

/**
 * Reads the layout's version, writing it if Redis has none; a RedisLayoutError when `build`
 * does not read the version found. Without a version, the one written is this build's on an
 * empty Redis and UNVERSIONED_LAYOUT on one with data: SET NX, so the first writer wins and
 * every other process reads what it wrote.
 */
export async function checkLayout(redis: RedisClient, build: LayoutRange = THIS_BUILD): Promise<LayoutFound> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const stored = await redis.get(LAYOUT_VERSION_KEY);
    if (stored !== null) return judge(stored, build);
    const hadData = await holdsData(redis);
    const proposed = String(hadData ? UNVERSIONED_LAYOUT : build.newest);
    if ((await redis.set(LAYOUT_VERSION_KEY, proposed, 'NX')) === 'OK') {
      return { version: judge(proposed, build).version, outcome: hadData ? 'adopted' : 'written' };
    }
    // Another process wrote it first: read what it wrote, on the next turn.
  }
  throw new Error(`the Redis layout's version (${LAYOUT_VERSION_KEY}) vanished ${ATTEMPTS} times while it was being written`);
}

/** The version found, if `build` reads it. */
function judge(stored: string, build: LayoutRange): LayoutFound {
  const parsed = StoredVersion.safeParse(stored);
  if (!parsed.success || parsed.data < build.oldest || parsed.data > build.newest) throw new RedisLayoutError(stored, build);
  return { version: parsed.data, outcome: parsed.data === build.newest ? 'current' : 'older' };
}

/** Whether any key of the layout exists (on a cluster, on any primary). */
function holdsData(redis: RedisClient): Promise<boolean> {
  return anyKey(redis, DATA_PATTERN);
}

/** Why `build` refuses the version `found`, and what to do. */
function refusal(found: string, build: LayoutRange): string {
  const reads = build.oldest === build.newest ? `layout ${build.newest}` : `layouts ${build.oldest} to ${build.newest}`;
  const parsed = StoredVersion.safeParse(found);
  if (!parsed.success) {
    return `holds an unknown Tollgate layout (${LAYOUT_VERSION_KEY} is ${JSON.stringify(found)}); this build reads ${reads}: upgrade this process, or point it at another Redis`;
  }
  if (parsed.data > build.newest) {
    return `holds Tollgate layout ${parsed.data}; this build reads ${reads}: upgrade this process, or point it at another Redis`;
  }
  return `holds Tollgate layout ${parsed.data}; this build reads ${reads}: run a build that reads layout ${parsed.data} on it, or point this process at another Redis`;
}

/** Says what the check found, if worth saying: a version written, or an older layout read. */
export function logLayout(log: Log, found: LayoutFound): void {
  const details = { redisLayout: found.version };
  switch (found.outcome) {
    case 'written':
      log.info(details, `Redis held no Tollgate data: wrote layout version ${found.version} (${LAYOUT_VERSION_KEY})`);
      return;
    case 'adopted':
      log.info(
        details,
        `Redis holds Tollgate data written before the layout had a version: recorded it as layout ${found.version} (${LAYOUT_VERSION_KEY})`,
      );
      return;
    case 'older':
      log.info(
        details,
        `Redis holds Tollgate layout ${found.version}, older than the one this build writes; this build reads it: going on`,
      );
      return;
    case 'current':
      log.debug(details, `Redis holds Tollgate layout ${found.version}`);
  }
}
