// Usage records of a single process, bounded in time (`retentionMs`) and in count per user
// (`maxRecordsPerUser`, oldest dropped first), with daily totals per user and per router kept
// apart from the records, as long as the Redis log keeps them.
import {
  addToTotals,
  EMPTY_TOTALS,
  addInto,
  subjectParts,
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
import { checkLimit, comparePositions, formatPosition, matches, parsePosition, type Position } from '../paging.ts';
import { DAILY_TOTALS_DAYS, daysBetween, utcDay } from '../usage-days.ts';
import { DAY_MS } from '../../time.ts';

export interface MemoryUsageLogOptions {
  readonly retentionMs: number;
  /** Most records kept per user; the oldest go first. */
  readonly maxRecordsPerUser?: number;
  /** The clock retention is measured on. */
  readonly now?: () => number;
}

/**
 * A record and its sequence number (its position is [record.time, seq]). Up to
 * maxRecordsPerUser of them live per user: they hold no more than that, as every object a record
 * keeps is one more for the garbage collector to copy and mark.
 */
class Entry {
  readonly record: UsageRecord;
  readonly seq: number;

  constructor(record: UsageRecord, seq: number) {
    this.record = record;
    this.seq = seq;
  }

  position(): Position {
    return [this.record.time, this.seq];
  }
}

const DEFAULT_MAX_RECORDS_PER_USER = 100_000;
/** How far past the cap a user's records may go before the oldest are cut. */
const TRIM_BATCH = 1024;

export class MemoryUsageLog implements UsageLog {
  readonly #retentionMs: number;
  readonly #maxRecords: number;
  readonly #now: () => number;
  /** user id -> entries, oldest first */
  readonly #entries = new Map<string, Entry[]>();
  /** `<group>:<id>` (usage-log.ts subjectsOf) -> day -> totals, added to in place */
  readonly #daily = new Map<string, Map<string, MutableTotals>>();
  #sequence = 0;

  constructor(options: MemoryUsageLogOptions) {
    this.#retentionMs = options.retentionMs;
    this.#maxRecords = options.maxRecordsPerUser ?? DEFAULT_MAX_RECORDS_PER_USER;
    this.#now = options.now ?? Date.now;
  }

  /** Keeps `record` itself, not a copy: the caller made it for the log and does not change it. */
  async append(record: UsageRecord): Promise<void> {
    const entries = this.#fresh(record.user_id);
    const entry = new Entry(record, ++this.#sequence);
    // Records nearly always arrive in time order: append, and search only for a late one.
    if (entries.length === 0 || entries[entries.length - 1]!.record.time <= record.time) entries.push(entry);
    else entries.splice(insertionIndex(entries, record.time), 0, entry);
    // Trimmed in batches: cutting one record off the front copies the whole array each time.
    if (entries.length > this.#maxRecords + TRIM_BATCH) entries.splice(0, entries.length - this.#maxRecords);
    this.#entries.set(record.user_id, entries);
    const day = utcDay(record.time);
    // As usage-log.ts subjectsOf, without its array per record.
    this.#count(`user:${record.user_id}`, day, record);
    this.#count(`router:${record.router}`, day, record);
    if (record.team_id) this.#count(`team:${record.team_id}`, day, record);
    if (record.key_id) this.#count(`key:${record.key_id}`, day, record);
    if (record.provider) this.#count(`provider:${record.provider}`, day, record);
  }

  async query(userId: string, query: UsageQuery): Promise<UsagePage> {
    checkLimit(query.limit);
    const after = query.after === undefined ? undefined : parsePosition(query.after);
    const entries = this.#fresh(userId);
    const records: UsageRecord[] = [];
    let totals = EMPTY_TOTALS;
    let more = false;
    let last: Entry | undefined;
    // Only the newest maxRecords count: older ones wait for the next batch trim.
    const oldest = Math.max(0, entries.length - this.#maxRecords);
    for (let i = entries.length - 1; i >= oldest; i--) {
      const entry = entries[i]!;
      const record = entry.record;
      if (!matches(record, query)) continue;
      totals = addToTotals(totals, record);
      if (after && comparePositions(entry.position(), after) >= 0) continue;
      if (records.length < query.limit) {
        records.push({ ...record });
        last = entry;
      } else more = true;
    }
    return { records, next: more && last ? formatPosition(last.position()) : null, totals };
  }

  async dailyTotals(subject: UsageSubject, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>> {
    const [group, id] = subjectParts(subject);
    const days = this.#daily.get(`${group}:${id}`);
    const out: Record<string, UsageTotals> = {};
    for (const day of daysBetween(fromDay, toDay)) {
      const totals = days?.get(day);
      if (totals) out[day] = { ...totals };
    }
    return out;
  }

  async totalsByGroup(group: UsageGroup, fromDay: string, toDay: string): Promise<Map<string, UsageTotals>> {
    return sumDays(await this.dailyByGroup(group, fromDay, toDay));
  }

  async dailyByGroup(group: UsageGroup, fromDay: string, toDay: string): Promise<Map<string, Record<string, UsageTotals>>> {
    const prefix = `${group}:`;
    const days = daysBetween(fromDay, toDay);
    const out = new Map<string, Record<string, UsageTotals>>();
    for (const [subject, byDay] of this.#daily) {
      if (!subject.startsWith(prefix)) continue;
      const found: Record<string, UsageTotals> = {};
      let any = false;
      for (const day of days) {
        const totals = byDay.get(day);
        if (totals) {
          found[day] = { ...totals };
          any = true;
        }
      }
      if (any) out.set(subject.slice(prefix.length), found);
    }
    return out;
  }

  /** Forgets a deleted user's records and daily totals (their part of router totals stays), or a key's or team's totals (`key:<id>`, `team:<id>`). */
  forget(subject: string): void {
    if (subject.startsWith('key:') || subject.startsWith('team:')) {
      this.#daily.delete(subject);
      return;
    }
    this.#entries.delete(subject);
    this.#daily.delete(`user:${subject}`);
  }

  /** The user's entries, those past retention dropped. */
  #fresh(userId: string): Entry[] {
    const entries = this.#entries.get(userId) ?? [];
    const oldest = this.#now() - this.#retentionMs;
    const expired = insertionIndex(entries, oldest - 1);
    if (expired > 0) entries.splice(0, expired);
    if (entries.length === 0) this.#entries.delete(userId);
    return entries;
  }

  /** Adds the record to the subject's totals of the day, in place (read out as copies). */
  #count(subject: string, day: string, record: UsageRecord): void {
    let days = this.#daily.get(subject);
    if (days === undefined) {
      days = new Map();
      this.#daily.set(subject, days);
    }
    const totals = days.get(day);
    if (totals !== undefined) {
      addInto(totals, record);
      return;
    }
    days.set(day, addToTotals(EMPTY_TOTALS, record));
    if (days.size > DAILY_TOTALS_DAYS) {
      const oldest = utcDay(this.#now() - DAILY_TOTALS_DAYS * DAY_MS);
      for (const known of days.keys()) if (known < oldest) days.delete(known);
    }
  }
}

/** Where a record of time `time` goes among entries sorted by time: after those of equal time. */
function insertionIndex(entries: readonly Entry[], time: number): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.record.time <= time) low = mid + 1;
    else high = mid;
  }
  return low;
}
