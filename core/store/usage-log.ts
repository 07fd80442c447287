// Usage records (spec 2.6): one per request, refused ones included, kept for a bounded time.
import type { Endpoint } from '../resources/kinds.ts';

export interface UsageRecord {
  readonly id: string;
  /** Milliseconds since the epoch. */
  readonly time: number;
  readonly user_id: string;
  readonly key_id: string | null;
  /** The user's team when the request was made (records made before teams existed: null). */
  readonly team_id: string | null;
  /** The router's name (not the alias called), or the name called when no router matched. */
  readonly router: string;
  /** The router asked for: `router` itself, or the one a fallback stood in for (docs/failure-handling.md). */
  readonly requested_router: string;
  readonly provider: string | null;
  readonly endpoint: Endpoint;
  readonly status: number;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** Of prompt_tokens, those charged as read from the backend's prompt cache (records made before they were kept: 0). */
  readonly cached_tokens: number;
  /** Of prompt_tokens, those charged as written to the backend's prompt cache (Anthropic's cache writes; before: 0). */
  readonly cache_write_tokens: number;
  /** Transcriptions: the seconds of audio charged for (0 for other endpoints). */
  readonly audio_seconds: number;
  /** The real cost (tokens times prices), in micro-units. */
  readonly cost_micros: bigint;
  /** What was charged to the budget: the cost, or less when the budget had no room left for it. */
  readonly charged_micros: bigint;
  /** cost_micros less charged_micros: what the budget did not cover (docs/budgets.md). */
  readonly uncovered_micros: bigint;
  /** What in the backend's usage report was not believed, comma-separated (usage-block.ts); null when all was. */
  readonly usage_anomaly: string | null;
  readonly kwh: number;
  readonly kgco2eq: number;
  readonly latency_ms: number;
  /** Streams: milliseconds to the first token. */
  readonly ttft_ms: number | null;
  /** The answer was cut short (client gone, backend broke off). */
  readonly incomplete: boolean;
}

export interface UsageQuery {
  readonly from?: number;
  readonly to?: number;
  /** Only records of this router. */
  readonly router?: string;
  /** Continue after this position: the `next` of an earlier page (records come newest first). */
  readonly after?: string;
  readonly limit: number;
}

export interface UsageTotals {
  readonly requests: number;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** Of prompt_tokens, those charged as read from and written to a backend's prompt cache (days before they were kept: 0). */
  readonly cached_tokens: number;
  readonly cache_write_tokens: number;
  readonly cost_micros: bigint;
  /** Of cost_micros, what budgets did not cover. */
  readonly uncovered_micros: bigint;
  readonly kwh: number;
  readonly kgco2eq: number;
}

export interface UsagePage {
  readonly records: UsageRecord[];
  /** Where the next page starts (`<ms>-<sequence>`, the last record's position): pass as `after`; null on the last page. */
  readonly next: string | null;
  /** Over every record the query matches, not only this page. */
  readonly totals: UsageTotals;
}

export interface UsageLog {
  /** Appends a record; callers do not wait on it before answering. */
  append(record: UsageRecord): Promise<void>;
  query(userId: string, query: UsageQuery): Promise<UsagePage>;
  /** Totals per UTC day (YYYY-MM-DD, both ends included) of one team, user, key, router or provider; days without usage are absent. */
  dailyTotals(subject: UsageSubject, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>>;
  /**
   * Totals over the UTC days `fromDay` to `toDay` (both included) of every team, user, key,
   * router or provider that has usage in them, by id or name: a spend report. Read from the daily
   * totals, so as long-lived as they are (a deleted user's, key's or team's go with it; routers
   * and providers keep theirs).
   */
  totalsByGroup(group: UsageGroup, fromDay: string, toDay: string): Promise<Map<string, UsageTotals>>;
  /** As totalsByGroup, day by day: id -> day -> totals (days without usage absent). */
  dailyByGroup(group: UsageGroup, fromDay: string, toDay: string): Promise<Map<string, Record<string, UsageTotals>>>;
}

/** Each id's totals over all its days: totalsByGroup from dailyByGroup. */
export function sumDays(byGroup: Map<string, Record<string, UsageTotals>>): Map<string, UsageTotals> {
  const out = new Map<string, UsageTotals>();
  for (const [id, days] of byGroup) out.set(id, Object.values(days).reduce(sumTotals, EMPTY_TOTALS));
  return out;
}

/** What usage is totalled by, per day: a spend report's groups. */
export const USAGE_GROUPS = ['team', 'user', 'key', 'router', 'provider'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** One team, user, key, router or provider, as `{ <group>: <id> }`. */
export type UsageSubject = { [G in UsageGroup]: { readonly [K in G]: string } }[UsageGroup];

/** The group and id of a subject. */
export function subjectParts(subject: UsageSubject): [UsageGroup, string] {
  const [group, id] = Object.entries(subject)[0] as [UsageGroup, string];
  return [group, id];
}

/** The daily totals a record adds to: its user's and router's, and its team's, key's and provider's when it has them. */
export function subjectsOf(record: UsageRecord): [UsageGroup, string][] {
  const out: [UsageGroup, string][] = [
    ['user', record.user_id],
    ['router', record.router],
  ];
  if (record.team_id) out.push(['team', record.team_id]);
  if (record.key_id) out.push(['key', record.key_id]);
  if (record.provider) out.push(['provider', record.provider]);
  return out;
}

export const EMPTY_TOTALS: UsageTotals = Object.freeze({
  requests: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  cached_tokens: 0,
  cache_write_tokens: 0,
  cost_micros: 0n,
  uncovered_micros: 0n,
  kwh: 0,
  kgco2eq: 0,
});

/** Two totals added together. */
export function sumTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    requests: a.requests + b.requests,
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    cached_tokens: a.cached_tokens + b.cached_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    cost_micros: a.cost_micros + b.cost_micros,
    uncovered_micros: a.uncovered_micros + b.uncovered_micros,
    kwh: a.kwh + b.kwh,
    kgco2eq: a.kgco2eq + b.kgco2eq,
  };
}

export function addToTotals(totals: UsageTotals, record: UsageRecord): UsageTotals {
  const sum = { ...totals };
  addInto(sum, record);
  return sum;
}

/** Totals a log adds to in place (a day's, per subject), handed out as copies. */
export type MutableTotals = { -readonly [K in keyof UsageTotals]: UsageTotals[K] };

/** Adds one record to `totals`, in place: the daily totals of both logs, once per record and subject. */
export function addInto(totals: MutableTotals, record: UsageRecord): void {
  totals.requests += 1;
  totals.prompt_tokens += record.prompt_tokens;
  totals.completion_tokens += record.completion_tokens;
  totals.cached_tokens += record.cached_tokens;
  totals.cache_write_tokens += record.cache_write_tokens;
  totals.cost_micros += record.cost_micros;
  totals.uncovered_micros += record.uncovered_micros;
  totals.kwh += record.kwh;
  totals.kgco2eq += record.kgco2eq;
}
