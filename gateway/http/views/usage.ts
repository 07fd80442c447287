// What /v1/usage answers: the caller's request history with totals, spend reports grouped by
// team, user, key, router or provider, and per-day series. One zod schema per shape, registered
// as the routes' response schemas (checked-json.ts) and the source of the Playground's types
// (web/api.ts, type-only). A report asked for as CSV is text, sent as it is. Only zod and
// core/ are imported (the Playground's type check reads this file).
import { z } from 'zod';
import { USAGE_GROUPS } from '../../../core/store/usage-log.ts';

/** What requests used, cost and emitted, summed over many. Money is a JSON number (6 decimals). */
export const TotalsView = z.strictObject({
  requests: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  cached_tokens: z.number().describe("Of prompt_tokens, those charged as read from a backend's prompt cache."),
  cache_write_tokens: z.number().describe("Of prompt_tokens, those charged as written to a backend's prompt cache."),
  cost: z.number(),
  charged: z.number().describe('Of the cost, what the budgets were charged.'),
  uncovered: z.number().describe('Of the cost, what the budget had no room left for (docs/budgets.md).'),
  kwh: z.number(),
  kgco2eq: z.number(),
});
export type TotalsView = z.output<typeof TotalsView>;

/** One request. */
export const UsageRecordView = z.strictObject({
  id: z.string(),
  time: z.string(),
  user: z.string(),
  key_id: z.string().nullable(),
  model: z.string().describe("The router's name (not the alias called)."),
  requested_model: z.string().describe('The router asked for: `model`, or the one a fallback stood in for.'),
  provider: z.string().nullable(),
  endpoint: z.string(),
  status: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  cached_tokens: z.number().describe("Of prompt_tokens, those charged as read from the backend's prompt cache."),
  cache_write_tokens: z.number().describe("Of prompt_tokens, those charged as written to the backend's prompt cache (Anthropic)."),
  audio_seconds: z.number(),
  cost: z.number(),
  charged: z.number(),
  uncovered: z.number(),
  usage_anomaly: z.string().nullable(),
  kwh: z.number(),
  kgco2eq: z.number(),
  latency_ms: z.number(),
  ttft_ms: z.number().nullable(),
  incomplete: z.boolean(),
});
export type UsageRecordView = z.output<typeof UsageRecordView>;

/** GET /v1/usage: a page of records, newest first, with the totals of everything the filter matches. */
export const UsagePage = z.strictObject({
  object: z.literal('list'),
  data: z.array(UsageRecordView),
  next: z.string().nullable(),
  totals: TotalsView,
});
export type UsagePage = z.output<typeof UsagePage>;

export const UsageGroup = z.enum(USAGE_GROUPS);
export type UsageGroup = z.output<typeof UsageGroup>;

/** Which team, user, key, router or provider a row is of: one of these, named by the report's group_by. */
const groupId = {
  team: z.string().optional(),
  user: z.string().optional(),
  key: z.string().optional(),
  router: z.string().optional(),
  provider: z.string().optional(),
};

/** GET /v1/usage/report (and /v1/usage with group_by): each visible id's totals over a range of days, dearest first. */
export const SpendReport = z.strictObject({
  object: z.literal('usage_report'),
  group_by: UsageGroup,
  from: z.string(),
  to: z.string(),
  data: z.array(z.strictObject({ ...groupId, ...TotalsView.shape })),
  totals: TotalsView,
});
export type SpendReport = z.output<typeof SpendReport>;

/** A day's totals. */
export const DayView = z.strictObject({ date: z.string(), ...TotalsView.shape });
export type DayView = z.output<typeof DayView>;

/** Each day of a range (none left out) and their sum. */
const series = { data: z.array(DayView), totals: TotalsView };

/** GET /v1/usage/daily: one user's, team's, key's, router's or provider's days. */
export const DailyUsage = z.strictObject({
  object: z.literal('list'),
  user: z.string().nullable(),
  router: z.string().nullable(),
  team: z.string().optional(),
  key: z.string().optional(),
  provider: z.string().optional(),
  from: z.string(),
  to: z.string(),
  ...series,
});
export type DailyUsage = z.output<typeof DailyUsage>;

/** GET /v1/usage/daily with group_by: each visible id's days. */
export const DailyReport = z.strictObject({
  object: z.literal('usage_daily_report'),
  group_by: UsageGroup,
  from: z.string(),
  to: z.string(),
  data: z.array(z.strictObject({ ...groupId, ...series })),
  totals: TotalsView,
});
export type DailyReport = z.output<typeof DailyReport>;

/** A report asked for with format=csv: RFC 4180 text, sent as it is (never through a schema). */
export const CsvText = z.string();
