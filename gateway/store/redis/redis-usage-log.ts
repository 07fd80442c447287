// Usage on Redis: each user's records in a stream (keys.usage) whose entry ids are the records'
// times, trimmed to the retention; daily totals per user and per router in hashes
// (keys.userDaily, keys.routerDaily) kept 400 days. Queries read the stream newest first
// between `to` and `from`, in batches, and total every matching record.
import type { Redis } from 'ioredis';
import type { Endpoint } from '../../resources/kinds.ts';
import { checkLimit, comparePositions, matches, parsePosition } from '../paging.ts';
import { DAILY_TOTALS_DAYS, daysBetween, utcDay } from '../usage-days.ts';
import { addToTotals, EMPTY_TOTALS, type UsageLog, type UsagePage, type UsageQuery, type UsageRecord, type UsageTotals } from '../usage-log.ts';
import { keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';

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
  readonly #redis: Redis;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #append: LuaScript;
  readonly #pending: { record: UsageRecord; resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(redis: Redis, options: RedisUsageLogOptions) {
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
    const keysOf: string[] = [];
    const args: (string | number)[] = [this.#oldestKept(), this.#retentionMs, DAILY_TTL_SECONDS];
    for (const { record } of batch) {
      const day = utcDay(record.time);
      keysOf.push(keys.usage(record.user_id), keys.userDaily(record.user_id, day), keys.routerDaily(record.router, day));
      const fields = toFields(record);
      args.push(record.time, record.prompt_tokens, record.completion_tokens, record.cost_micros.toString(), record.kwh, record.kgco2eq, fields.length / 2, ...fields);
    }
    this.#append.runWithKeys(keysOf, args).then(
      () => batch.forEach((entry) => entry.resolve()),
      (error: unknown) => batch.forEach((entry) => entry.reject(error)),
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

  async dailyTotals(subject: { user: string } | { router: string }, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>> {
    const days = daysBetween(fromDay, toDay);
    const pipeline = this.#redis.pipeline();
    for (const day of days) pipeline.hgetall('user' in subject ? keys.userDaily(subject.user, day) : keys.routerDaily(subject.router, day));
    const replies = days.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    const out: Record<string, UsageTotals> = {};
    replies.forEach(([error, hash], i) => {
      if (error) throw error;
      const fields = hash as Record<string, string>;
      if (fields.requests !== undefined) out[days[i]!] = toTotals(fields);
    });
    return out;
  }

  /** Entries of the user's stream in the query's time range, newest first, read in batches of BATCH. */
  async *#entries(userId: string, query: UsageQuery): AsyncGenerator<[id: string, record: UsageRecord]> {
    // Ids without a sequence: `to` means its last entry, `from` its first.
    let end = query.to === undefined ? '+' : String(Math.floor(query.to));
    const start = String(Math.ceil(query.from ?? 0));
    while (true) {
      const batch = await this.#redis.xrevrange(keys.usage(userId), end, start, 'COUNT', BATCH);
      for (const [id, fields] of batch) yield [id, fromFields(fields)];
      if (batch.length < BATCH) return;
      end = `(${batch[batch.length - 1]![0]}`;
    }
  }

  #oldestKept(): number {
    return Math.max(0, this.#now() - this.#retentionMs);
  }
}

/** A record as the flat field/value list of a stream entry; absent fields are nulls. */
/** The record as stream field/value pairs (ttft_ms left out when there is none). */
function toFields(record: UsageRecord): string[] {
  const fields = [
    'id', record.id,
    'time', String(record.time),
    'user_id', record.user_id,
    'router', record.router,
    'endpoint', record.endpoint,
    'status', String(record.status),
    'prompt_tokens', String(record.prompt_tokens),
    'completion_tokens', String(record.completion_tokens),
    'cost_micros', record.cost_micros.toString(),
    'kwh', String(record.kwh),
    'kgco2eq', String(record.kgco2eq),
    'latency_ms', String(record.latency_ms),
    'incomplete', record.incomplete ? '1' : '0',
  ];
  if (record.key_id !== null) fields.push('key_id', record.key_id);
  if (record.provider !== null) fields.push('provider', record.provider);
  if (record.ttft_ms !== null) fields.push('ttft_ms', String(record.ttft_ms));
  return fields;
}

function fromFields(flat: string[]): UsageRecord {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  return {
    id: f.id!,
    time: Number(f.time),
    user_id: f.user_id!,
    key_id: f.key_id ?? null,
    router: f.router!,
    provider: f.provider ?? null,
    endpoint: f.endpoint as Endpoint,
    status: Number(f.status),
    prompt_tokens: Number(f.prompt_tokens),
    completion_tokens: Number(f.completion_tokens),
    cost_micros: BigInt(f.cost_micros ?? '0'),
    kwh: Number(f.kwh),
    kgco2eq: Number(f.kgco2eq),
    latency_ms: Number(f.latency_ms),
    ttft_ms: f.ttft_ms === undefined ? null : Number(f.ttft_ms),
    incomplete: f.incomplete === '1',
  };
}

function toTotals(hash: Record<string, string>): UsageTotals {
  return {
    requests: Number(hash.requests ?? 0),
    prompt_tokens: Number(hash.prompt_tokens ?? 0),
    completion_tokens: Number(hash.completion_tokens ?? 0),
    cost_micros: BigInt(hash.cost_micros ?? '0'),
    kwh: Number(hash.kwh ?? 0),
    kgco2eq: Number(hash.kgco2eq ?? 0),
  };
}
