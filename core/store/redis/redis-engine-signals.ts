// Engine signals on Redis (store/engine-signals.ts): one hash for the whole fleet
// (keys.engineSignals), `s:<target>` holding the JSON of the target's latest scrape and
// `n:<target>` the requests sent to it since (each target named by its digest, keys.replicaName), so that a gateway reads every target it follows
// in one HMGET; and one claim per target (keys.engineScrape), taken and renewed by the gateway
// that scrapes it with the health checks' script (lua/health-claim-probe.lua). The hash expires
// when no gateway has written a scrape for ENGINE_SIGNALS_TTL_MS: nothing is left behind once the
// engines are gone.
import type { RedisClient } from './redis-client.ts';
import { z } from 'zod';
import type { EngineReading, EngineSample, EngineSignalStore } from '../engine-signals.ts';
import { keys, replicaName } from './keys.ts';
import { scriptBySha } from './scripts.ts';

/** How long the requests counted toward engines wait to be written, together. */
const SENT_FLUSH_MS = 10;

/** The hash goes when no scrape was written for this long. */
export const ENGINE_SIGNALS_TTL_MS = 10 * 60_000;

// Fields named by the target's digest (keys.replicaName): an address may carry credentials.
const readingField = (target: string) => `s:${replicaName(target)}`;
const sentField = (target: string) => `n:${replicaName(target)}`;

/** A target's two fields in keys.engineSignals, for the queue scripts that weigh them (queue-engine.lua). */
export const engineSignalFields = (target: string) => ({ reading: readingField(target), sent: sentField(target) });

const Count = z.number().nonnegative().optional();

/** A reading as the hash holds it: checked when read back, since any process may have written it. */
const StoredReading = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    at: z.number(),
    waiting: Count,
    running: Count,
    kvCacheUsage: z.number().min(0).max(1).optional(),
    prefixQueries: Count,
    prefixHits: Count,
  }),
  z.object({ ok: z.literal(false), at: z.number(), error: z.string() }),
]);

export class RedisEngineSignals implements EngineSignalStore {
  readonly #redis: RedisClient;
  // Sent by digest, not defined on the shared client: a defined script rides along every pipeline it makes.
  readonly #claim: ReturnType<typeof scriptBySha>;
  /** Requests counted (sent) and not yet written, by target; written once a turn of the event loop. */
  readonly #unsent = new Map<string, number>();
  #flushTimer: NodeJS.Timeout | undefined;

  constructor(redis: RedisClient) {
    this.#redis = redis;
    this.#claim = scriptBySha(redis, 'health-claim-probe', 1);
  }

  async claimScrapes(targets: readonly string[], owner: string, ttlMs: number): Promise<ReadonlySet<string>> {
    const ttl = Math.max(1, Math.round(ttlMs));
    // Sent together: ioredis writes them back to back, so all of them cost one round trip.
    const claimed = await Promise.all(targets.map((target) => this.#claim.run(keys.engineScrape(target), owner, ttl)));
    return new Set(targets.filter((_, i) => claimed[i] === 1));
  }

  async record(target: string, reading: EngineReading): Promise<void> {
    const multi = this.#redis.multi().hset(keys.engineSignals, readingField(target), JSON.stringify(reading));
    if (reading.ok) multi.hset(keys.engineSignals, sentField(target), 0);
    await multi.pexpire(keys.engineSignals, ENGINE_SIGNALS_TTL_MS).exec();
  }

  async read(targets: readonly string[]): Promise<Map<string, EngineSample>> {
    const samples = new Map<string, EngineSample>();
    if (targets.length === 0) return samples;
    // What this gateway counted goes before the read, on the same connection: the read includes it.
    this.#flush();
    const fields = targets.flatMap((target) => [readingField(target), sentField(target)]);
    const values = await this.#redis.hmget(keys.engineSignals, ...fields);
    targets.forEach((target, i) => {
      const reading = decode(values[2 * i]);
      if (!reading) return;
      const sent = Number(values[2 * i + 1] ?? 0);
      samples.set(target, { reading, sentSince: Number.isFinite(sent) && sent > 0 ? sent : 0 });
    });
    return samples;
  }

  /**
   * Counts a request sent to `target`. Counts are written every SENT_FLUSH_MS, one HINCRBY per
   * target, and before each read. A command per request was a round trip's client work on every
   * request of the Redis path: +23% CPU per request in `npm run bench`, 2026-11-27. Even one
   * pipeline per turn of the event loop came to about one per request on the streamed path.
   * Other gateways read the counts a few times a second, so a delay of a few ms changes nothing
   * they see.
   */
  sent(target: string): void {
    this.#unsent.set(target, (this.#unsent.get(target) ?? 0) + 1);
    if (this.#flushTimer !== undefined) return;
    this.#flushTimer = setTimeout(() => this.#flush(), SENT_FLUSH_MS);
    this.#flushTimer.unref();
  }

  /** Writes the counts not yet written; not awaited: a lost count only makes the next read lower until the next scrape. */
  #flush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#unsent.size === 0) return;
    const done = (promise: Promise<unknown>) => void promise.catch(() => {});
    if (this.#unsent.size === 1) {
      const [target, count] = this.#unsent.entries().next().value!;
      done(this.#redis.hincrby(keys.engineSignals, sentField(target), count));
    } else {
      const pipeline = this.#redis.pipeline();
      for (const [target, count] of this.#unsent) pipeline.hincrby(keys.engineSignals, sentField(target), count);
      done(pipeline.exec());
    }
    this.#unsent.clear();
  }

  async forget(target: string): Promise<void> {
    await this.#redis.hdel(keys.engineSignals, readingField(target), sentField(target));
  }
}

/** A stored reading, or undefined when there is none or it does not parse (written by a build that lays it out otherwise). */
function decode(value: string | null | undefined): EngineReading | undefined {
  if (!value) return undefined;
  try {
    const parsed = StoredReading.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
