// Usage on Redis: each user's records in a stream (keys.usage) whose entry ids are the records'
// times, trimmed to the retention; daily totals per user and per router in hashes
// (keys.daily) kept 400 days. Queries read the stream newest first
// between `to` and `from`, in batches, and total every matching record. An entry is written and
// read by usage-entry.ts, in any of the shapes the layout declares (layout.ts).
import { bySlot, pipelined, scanPages, type RedisClient } from './redis-client.ts';
import { checkLimit, comparePositions, matches, parsePosition } from '../paging.ts';
import { DAILY_TOTALS_DAYS, daysBetween, utcDay } from '../usage-days.ts';
import {
  addToTotals,
  EMPTY_TOTALS,
  addInto,
  subjectParts,
  subjectsOf,
  sumDays,
  type MutableTotals,
  type UsageGroup,
  type UsageLog,
  type UsageSubject,
  type UsagePage,
  type UsageQuery,
  type UsageRecord,
  type UsageTotals,
} from '../usage-log.ts';
import { DAILY_PREFIXES, keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';
import { decodeUsageEntry, encodeUsageEntry } from './usage-entry.ts';

export interface RedisUsageLogOptions {
  readonly retentionMs: number;
  /** The clock retention is measured on. */
  readonly now?: () => number;
}

/** Stream entries read per XREVRANGE. */
const BATCH = 500;
const DAILY_TTL_SECONDS = DAILY_TOTALS_DAYS * 86_400;
/** Most records written in one script call. */
const MAX_BATCH = 256;

export class RedisUsageLog implements UsageLog {
  readonly #redis: RedisClient;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #append: LuaScript;
  readonly #pending: { record: UsageRecord; resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(redis: RedisClient, options: RedisUsageLogOptions) {
    this.#redis = redis;
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
    this.#append = defineScript(redis, 'usage-append');
  }

  /**
   * Records are gathered for one turn of the event loop (at most MAX_BATCH) and written in one
   * script call; the promise settles when the record's batch has been written.
   */
  append(record: UsageRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ record, resolve, reject });
      if (this.#pending.length >= MAX_BATCH) this.#flush();
      else if (this.#pending.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#pending.splice(0, this.#pending.length);
    if (batch.length === 0) return;
    const streams: string[] = [];
    const times: string[] = [];
    const records: string[] = [];
    // The batch's totals per daily hash (a user's, a router's, ...): one set of increments each.
    const daily = new Map<string, MutableTotals>();
    for (const { record } of batch) {
      streams.push(keys.usage(record.user_id));
      times.push(String(record.time));
      records.push(encodeUsageEntry(record));
      const day = utcDay(record.time);
      for (const [group, id] of subjectsOf(record)) addToDaily(daily, keys.daily(group, id, day), record);
    }
    const increments = [...daily].map(([key, sums]) => [
      key,
      String(sums.requests),
      String(sums.prompt_tokens),
      String(sums.completion_tokens),
      sums.cost_micros.toString(),
      String(sums.kwh),
      String(sums.kgco2eq),
      sums.uncovered_micros.toString(),
      String(sums.cached_tokens),
      String(sums.cache_write_tokens),
    ]);
    const common = { oldest: String(this.#oldestKept()), retention: String(this.#retentionMs), ttl: String(DAILY_TTL_SECONDS) };
    // A record's JSON holds no raw line break (JSON.stringify escapes them): one per line.
    const calls = !this.#redis.isCluster
      ? [this.#append.runWithKeys([], [JSON.stringify({ ...common, streams, times, daily: increments }), records.join('\n')])]
      : // On a cluster, one call per slot, each with its keys as KEYS: the records of the users
        // whose streams are there, and the daily totals there.
        bySlot(
          [...streams.map((key, record) => ({ key, record })), ...increments.map((daily) => ({ key: daily[0]!, daily }))],
          (write) => write.key,
        ).map((group) => {
          const at = group.flatMap((write) => ('record' in write ? [write.record] : []));
          const daily = group.flatMap((write) => ('daily' in write ? [write.daily] : []));
          const part = { ...common, streams: at.map((i) => streams[i]!), times: at.map((i) => times[i]!), daily };
          const keysOf = [...new Set(part.streams), ...daily.map(([key]) => key!)];
          return this.#append.runWithKeys(keysOf, [JSON.stringify(part), at.map((i) => records[i]!).join('\n')]);
        });
    Promise.all(calls).then(
      () => {
        for (const entry of batch) entry.resolve();
      },
      (error: unknown) => {
        for (const entry of batch) entry.reject(error);
      },
    );
  }

  async query(userId: string, query: UsageQuery): Promise<UsagePage> {
    checkLimit(query.limit);
    const after = query.after === undefined ? undefined : parsePosition(query.after);
    // A late record can sit at a newer position than its time: the retention applies to times.
    const bounded: UsageQuery = { ...query, from: Math.max(query.from ?? 0, this.#oldestKept()) };
    const records: UsageRecord[] = [];
    let totals = EMPTY_TOTALS;
    let next: string | null = null;
    let last: string | undefined;
    for await (const [id, record] of this.#entries(userId, bounded)) {
      if (!matches(record, bounded)) continue;
      totals = addToTotals(totals, record);
      if (after && comparePositions(parsePosition(id), after) >= 0) continue;
      if (records.length < query.limit) {
        records.push(record);
        last = id;
      } else next = last ?? null;
    }
    return { records, next, totals };
  }

  async dailyTotals(subject: UsageSubject, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>> {
    const days = daysBetween(fromDay, toDay);
    const [group, id] = subjectParts(subject);
    const pipeline = this.#redis.pipeline();
    for (const day of days) pipeline.hgetall(keys.daily(group, id, day));
    const replies = days.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    const out: Record<string, UsageTotals> = {};
    replies.forEach(([error, hash], i) => {
      if (error) throw error;
      const fields = hash as Record<string, string>;
      if (fields.requests !== undefined) out[days[i]!] = toTotals(fields);
    });
    return out;
  }

  /**
   * Found by SCAN over the daily totals' keys (an admin's report, not a request's path: it reads
   * the key space once, in pages), then read in one pipeline per page.
   */
  async totalsByGroup(group: UsageGroup, fromDay: string, toDay: string): Promise<Map<string, UsageTotals>> {
    return sumDays(await this.dailyByGroup(group, fromDay, toDay));
  }

  /**
   * Found by SCAN over the daily totals' keys (an admin's report, not a request's path: it reads
   * the key space once, in pages), then read in one pipeline per page.
   */
  async dailyByGroup(group: UsageGroup, fromDay: string, toDay: string): Promise<Map<string, Record<string, UsageTotals>>> {
    const wanted = new Set(daysBetween(fromDay, toDay));
    const pattern = keys.daily(group, '*', '*');
    const out = new Map<string, Record<string, UsageTotals>>();
    for await (const found of scanPages(this.#redis, pattern)) {
      const inRange = found.filter((key) => wanted.has(key.slice(key.lastIndexOf(':') + 1)));
      const replies = await pipelined(
        this.#redis,
        inRange,
        (key) => key,
        (pipeline, key) => pipeline.hgetall(key),
      );
      replies.forEach(([error, hash], i) => {
        if (error) throw error;
        const fields = hash as Record<string, string>;
        const key = inRange[i]!;
        const id = idOfDaily(group, key);
        if (fields.requests === undefined || id === undefined) return;
        const days = out.get(id) ?? {};
        days[key.slice(key.lastIndexOf(':') + 1)] = toTotals(fields);
        out.set(id, days);
      });
    }
    return out;
  }

  /** Entries of the user's stream in the query's time range, newest first, read in batches of BATCH. */
  async *#entries(userId: string, query: UsageQuery): AsyncGenerator<[id: string, record: UsageRecord]> {
    // Ids without a sequence: `to` means its last entry, `from` its first.
    let end = query.to === undefined ? '+' : String(Math.floor(query.to));
    const start = String(Math.ceil(query.from ?? 0));
    while (true) {
      const batch = await this.#redis.xrevrange(keys.usage(userId), end, start, 'COUNT', BATCH);
      for (const [id, fields] of batch) yield [id, decodeUsageEntry(fields[1]!)];
      if (batch.length < BATCH) return;
      end = `(${batch[batch.length - 1]![0]}`;
    }
  }

  #oldestKept(): number {
    return Math.max(0, this.#now() - this.#retentionMs);
  }
}

/** Adds a record to the batch's sums for one daily hash. */
function addToDaily(daily: Map<string, MutableTotals>, key: string, record: UsageRecord): void {
  const sums = daily.get(key);
  if (sums === undefined) daily.set(key, addToTotals(EMPTY_TOTALS, record));
  else addInto(sums, record);
}

/** The id in a key of keys.daily of the group (`tg:r:{<name>}:daily:<day>`, say); an id may hold `:`. */
function idOfDaily(group: UsageGroup, key: string): string | undefined {
  const [prefix, suffix] = DAILY_PREFIXES[group];
  const end = key.lastIndexOf(`${suffix}:daily:`);
  if (!key.startsWith(prefix) || end < prefix.length) return undefined;
  return key.slice(prefix.length, end);
}

function toTotals(hash: Record<string, string>): UsageTotals {
  return {
    requests: Number(hash.requests ?? 0),
    prompt_tokens: Number(hash.prompt_tokens ?? 0),
    completion_tokens: Number(hash.completion_tokens ?? 0),
    // Absent from the hashes of days before they were kept, and while none was cached.
    cached_tokens: Number(hash.cached_tokens ?? 0),
    cache_write_tokens: Number(hash.cache_write_tokens ?? 0),
    cost_micros: BigInt(hash.cost_micros ?? '0'),
    uncovered_micros: BigInt(hash.uncovered_micros ?? '0'),
    kwh: Number(hash.kwh ?? 0),
    kgco2eq: Number(hash.kgco2eq ?? 0),
  };
}
