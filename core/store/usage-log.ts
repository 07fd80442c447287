// Usage records (spec 2.6): one per request, refused ones included, kept for a bounded time.
import type { Endpoint } from '../resources/kinds.ts';

export interface UsageRecord {
  readonly id: string;
  /** Milliseconds since the epoch. */
  readonly time: number;
  readonly user_id: string;
  readonly key_id: string | null;
  /** The router's name (not the alias called), or the name called when no router matched. */
  readonly router: string;
  /** The router asked for: `router` itself, or the one a fallback stood in for (docs/failure-handling.md). */
  readonly requested_router: string;
  readonly provider: string | null;
  readonly endpoint: Endpoint;
  readonly status: number;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
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
  /** Totals per UTC day (YYYY-MM-DD, both ends included) of a user or a router; days without usage are absent. */
  dailyTotals(subject: { user: string } | { router: string }, fromDay: string, toDay: string): Promise<Record<string, UsageTotals>>;
  /**
   * Totals over the UTC days `fromDay` to `toDay` (both included) of every user or every router
   * that has usage in them, by id or name: a spend report. Read from the daily totals, so as
   * long-lived as they are (a deleted user's go with it; routers keep theirs).
   */
  totalsByGroup(group: UsageGroup, fromDay: string, toDay: string): Promise<Map<string, UsageTotals>>;
}

/** What a spend report groups by. */
export const USAGE_GROUPS = ['user', 'router'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export const EMPTY_TOTALS: UsageTotals = Object.freeze({
  requests: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
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
    cost_micros: a.cost_micros + b.cost_micros,
    uncovered_micros: a.uncovered_micros + b.uncovered_micros,
    kwh: a.kwh + b.kwh,
    kgco2eq: a.kgco2eq + b.kgco2eq,
  };
}

export function addToTotals(totals: UsageTotals, record: UsageRecord): UsageTotals {
  return {
    requests: totals.requests + 1,
    prompt_tokens: totals.prompt_tokens + record.prompt_tokens,
    completion_tokens: totals.completion_tokens + record.completion_tokens,
    cost_micros: totals.cost_micros + record.cost_micros,
    uncovered_micros: totals.uncovered_micros + record.uncovered_micros,
    kwh: totals.kwh + record.kwh,
    kgco2eq: totals.kgco2eq + record.kgco2eq,
  };
}
