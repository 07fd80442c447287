// The caller's usage records (spec 2.6: the request history with each request's cost), newest
// first, with totals over everything the filter matches; per-day totals for charts; and spend
// reports grouped by team, user, key, router or provider (`group_by`, as JSON or CSV). Admins may
// read anyone's; a team admin their team's, its users' and their keys' (usage-scope.ts); others
// only their own, and their own keys'.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ModelName, ResourceId } from '../../../core/resources/fields.ts';
import type { ServedRouting } from '../../routing/served-routing.ts';
import type { AccountDirectory } from '../../accounts/account-directory.ts';
import {
  EMPTY_TOTALS,
  subjectParts,
  sumTotals,
  USAGE_GROUPS,
  type UsageGroup,
  type UsageLog,
  type UsageRecord,
  type UsageSubject,
  type UsageTotals,
} from '../../../core/store/usage-log.ts';
import { usageScope, type UsageScopeAccounts } from '../usage-scope.ts';
import { daysBetween, utcDay } from '../../../core/store/usage-days.ts';
import { microsToNumber } from '../../metering/cost.ts';
import { callerOf } from '../auth.ts';
import { errors } from '../../api/api-error.ts';
import { PageLimit, parseWith } from '../../api/payloads.ts';
import { DAY_MS } from '../../../core/time.ts';
import { CsvText, DailyReport, DailyUsage, SpendReport, UsagePage } from '../views/usage.ts';
import { responds, withResponseSchemas } from '../views/checked-json.ts';

export interface UsageDeps {
  /** Where the requests are recorded and summed. */
  readonly usage: Pick<UsageLog, 'query' | 'totalsByGroup' | 'dailyTotals' | 'dailyByGroup'>;
  /** Whose usage a caller may read: users, their teams and keys (the account directory). */
  readonly accounts: UsageScopeAccounts & Pick<AccountDirectory, 'getUser'>;
  /** Aliases called are read as their router's name. */
  readonly routing: ServedRouting;
  readonly now: () => number;
}

/** Longest range of /v1/usage/daily, in days. */
const MAX_DAYS = 366;
/** Range of /v1/usage/daily when `from` is not given, in days ending at `to`. */
const DEFAULT_DAYS = 30;

const IsoInstant = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);

/** Epoch milliseconds, or an ISO 8601 date-time with a time zone, or a date (midnight UTC). */
const Instant = z.string().transform((text, ctx) => {
  const ms = /^\d{1,15}$/.test(text) ? Number(text) : IsoInstant.safeParse(text).success ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) {
    ctx.addIssue({ code: 'custom', message: 'must be epoch milliseconds or an ISO 8601 date-time like 2030-01-31T00:00:00Z' });
    return z.NEVER;
  }
  return ms;
});

const Day = z.iso.date({ message: 'must be a date like 2030-01-31' });

const UsageQuery = z
  .strictObject({
    group_by: z.enum(USAGE_GROUPS).optional(),
    format: z.enum(['json', 'csv']).optional(),
    from: Instant.optional(),
    to: Instant.optional(),
    model: z.string().min(1).max(128).optional(),
    user: ResourceId.optional(),
    limit: PageLimit,
    after: z
      .string()
      .regex(/^\d{1,15}-\d{1,15}$/, 'must be the `next` of a previous page')
      .optional(),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { message: 'must not be before from', path: ['to'] });

const DailyQuery = z.strictObject({
  from: Day.optional(),
  to: Day.optional(),
  user: ResourceId.optional(),
  router: ModelName.optional(),
  team: ResourceId.optional(),
  key: z.string().min(1).max(200).optional(),
  provider: z.string().min(1).max(300).optional(),
  group_by: z.enum(USAGE_GROUPS).optional(),
  format: z.enum(['json', 'csv']).default('json'),
});

const ReportQuery = z.strictObject({
  group_by: z.enum(USAGE_GROUPS),
  from: Day.optional(),
  to: Day.optional(),
  format: z.enum(['json', 'csv']).default('json'),
});

/** The columns of a spend report, in order (the CSV's header after the group's). */
const REPORT_COLUMNS = [
  'requests',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost',
  'charged',
  'uncovered',
  'kwh',
  'kgco2eq',
] as const;

/** The answers of /v1/usage: a page of records, or with group_by a spend report; either as CSV when asked. */
const UsageAnswer = z.union([z.discriminatedUnion('object', [UsagePage, SpendReport]), CsvText]);
const ReportAnswer = z.union([SpendReport, CsvText]);
const DailyAnswer = z.union([z.discriminatedUnion('object', [DailyUsage, DailyReport]), CsvText]);

/** The usage routes: a plugin for any valid key, each route scoping what the caller may read. */
export async function usageApi(instance: FastifyInstance, deps: UsageDeps): Promise<void> {
  const app = withResponseSchemas(instance);
  app.get('/v1/usage', responds({ 200: UsageAnswer }), async (request, reply) => {
    const query = parseWith(UsageQuery, request.query);
    // Grouped: the spend report over the days the range covers.
    if (query.group_by !== undefined) {
      const day = (ms: number | undefined) => (ms === undefined ? undefined : utcDay(ms));
      return report(request, reply, deps, query.group_by, day(query.from), day(query.to), query.format ?? 'json');
    }
    const user = await subjectUser(request, query.user, deps.accounts);
    const page = await deps.usage.query(user, {
      from: query.from,
      to: query.to,
      router: query.model === undefined ? undefined : routerName(deps.routing, query.model),
      after: query.after,
      limit: query.limit,
    });
    const answer: UsagePage = { object: 'list', data: page.records.map(recordView), next: page.next, totals: totalsView(page.totals) };
    return answer;
  });

  // A spend report (admins): every user's or router's totals over a range of days, dearest
  // first, as JSON or CSV.
  app.get('/v1/usage/report', responds({ 200: ReportAnswer }), async (request, reply) => {
    const query = parseWith(ReportQuery, request.query);
    return report(request, reply, deps, query.group_by, query.from, query.to, query.format);
  });

  app.get('/v1/usage/daily', responds({ 200: DailyAnswer }), async (request, reply) => {
    const query = parseWith(DailyQuery, request.query);
    const named = DAILY_SUBJECTS.filter((group) => query[group] !== undefined);
    if (named.length > 1) throw errors.invalidRequest(`${named[1]}: give one of user, team, key, router and provider`, named[1]!);
    if (named.length > 0 && query.group_by !== undefined)
      throw errors.invalidRequest(`group_by: give group_by or ${named[0]}, not both`, 'group_by');
    const { from, to } = dayRange(query.from, query.to, deps.now());
    const scope = await usageScope(request, deps.accounts);
    const series = (byDay: Record<string, UsageTotals>) => ({
      data: daysBetween(from, to).map((date) => ({ date, ...totalsView(byDay[date] ?? EMPTY_TOTALS) })),
      totals: totalsView(Object.values(byDay).reduce(sumTotals, EMPTY_TOTALS)),
    });
    if (query.group_by !== undefined) {
      const group = query.group_by;
      const byGroup = await deps.usage.dailyByGroup(group, from, to);
      const visible = await scope.filter(group);
      const groups = [...byGroup].filter(([id]) => visible(id)).sort(([a], [b]) => a.localeCompare(b));
      const total = groups.flatMap(([, days]) => Object.values(days)).reduce(sumTotals, EMPTY_TOTALS);
      if (query.format === 'csv') {
        const rows = groups.flatMap(([id, days]) =>
          daysBetween(from, to).map((date) => ({ ...groupKey(group, id), date, ...totalsView(days[date] ?? EMPTY_TOTALS) })),
        );
        return csv(reply, [group, 'date', ...REPORT_COLUMNS], rows, `usage-daily-by-${group}-${from}-to-${to}.csv`);
      }
      const answer: DailyReport = {
        object: 'usage_daily_report',
        group_by: group,
        from,
        to,
        data: groups.map(([id, days]) => ({ ...groupKey(group, id), ...series(days) })),
        totals: totalsView(total),
      };
      return answer;
    }
    let subject: UsageSubject;
    if (query.router !== undefined) subject = { router: routerName(deps.routing, query.router) };
    else if (query.team !== undefined) subject = { team: query.team };
    else if (query.key !== undefined) subject = { key: query.key };
    else if (query.provider !== undefined) subject = { provider: query.provider };
    else subject = { user: await subjectUser(request, query.user, deps.accounts) };
    const [group, id] = subjectParts(subject);
    if (group !== 'user' && !(await scope.filter(group, group))(id))
      throw errors.forbidden(`You may not read the usage of ${group} "${id}"`, group);
    const answer: DailyUsage = {
      object: 'list',
      user: 'user' in subject ? subject.user : null,
      router: 'router' in subject ? subject.router : null,
      ...(group !== 'user' && group !== 'router' && groupKey(group, id)),
      from,
      to,
      ...series(await deps.usage.dailyTotals(subject, from, to)),
    };
    return answer;
  });
}

/** The subjects /v1/usage/daily takes one of. */
const DAILY_SUBJECTS = ['user', 'team', 'key', 'router', 'provider'] as const;

/** A spend report: each visible id's totals over a range of days, dearest first, as JSON or CSV. */
async function report(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: UsageDeps,
  group: UsageGroup,
  fromDay: string | undefined,
  toDay: string | undefined,
  format: 'json' | 'csv',
): Promise<SpendReport | string> {
  const scope = await usageScope(request, deps.accounts);
  const visible = await scope.filter(group);
  const { from, to } = dayRange(fromDay, toDay, deps.now());
  const groups = [...(await deps.usage.totalsByGroup(group, from, to))].filter(([id]) => visible(id));
  const data: SpendReport['data'] = groups
    .sort(([a, x], [b, y]) => (y.cost_micros > x.cost_micros ? 1 : y.cost_micros < x.cost_micros ? -1 : a.localeCompare(b)))
    .map(([id, totals]) => ({ ...groupKey(group, id), ...totalsView(totals) }));
  const totals = totalsView(groups.map(([, t]) => t).reduce(sumTotals, EMPTY_TOTALS));
  if (format === 'json') return { object: 'usage_report', group_by: group, from, to, data, totals };
  return csv(reply, [group, ...REPORT_COLUMNS], data, `usage-by-${group}-${from}-to-${to}.csv`);
}

/** The id of a row's team, user, key, router or provider, under the group's name. */
function groupKey(group: UsageGroup, id: string): { [G in UsageGroup]?: string } {
  return { [group]: id };
}

/** Rows as a CSV file (RFC 4180: a header line, CRLF line ends), to be saved as `filename`. */
function csv(reply: FastifyReply, header: string[], rows: readonly Readonly<Record<string, unknown>>[], filename: string): string {
  reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${filename}"`);
  const lines = rows.map((row) => header.map((column) => csvField(row[column])));
  return [header, ...lines].map((fields) => `${fields.join(',')}\r\n`).join('');
}

/** A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. */
function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Whose usage: the caller's own, or for an admin anyone's, for a team admin their team's (who must exist). */
async function subjectUser(
  request: FastifyRequest,
  requested: string | undefined,
  accounts: Pick<AccountDirectory, 'getUser'>,
): Promise<string> {
  const { user } = callerOf(request);
  if (requested === undefined || requested === user.id) return user.id;
  if (user.role !== 'admin' && user.role !== 'team_admin') throw errors.forbidden("Only admins may read another user's usage", 'user');
  const other = await accounts.getUser(requested);
  if (user.role === 'team_admin' && (other === undefined || other.team !== user.team || user.team === null))
    throw errors.forbidden(`User "${requested}" is not in your team`, 'user');
  if (!other) throw errors.notFound(`User "${requested}" not found`, 'user');
  return requested;
}

/** An alias is resolved to its router; a name no router has (a deleted one) is kept as it is. */
function routerName(routing: ServedRouting, called: string): string {
  return routing.table.lookup(called)?.spec.name ?? called;
}

function dayRange(fromDay: string | undefined, toDay: string | undefined, now: number): { from: string; to: string } {
  const to = toDay ?? utcDay(now);
  const from = fromDay ?? utcDay(Date.parse(to) - (DEFAULT_DAYS - 1) * DAY_MS);
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  if (!(days >= 1)) throw errors.invalidRequest('to: must not be before from', 'to');
  if (days > MAX_DAYS) throw errors.invalidRequest(`from: the range may span at most ${MAX_DAYS} days`, 'from');
  return { from, to };
}

function totalsView(totals: UsageTotals) {
  return {
    requests: totals.requests,
    prompt_tokens: totals.prompt_tokens,
    completion_tokens: totals.completion_tokens,
    total_tokens: totals.prompt_tokens + totals.completion_tokens,
    cached_tokens: totals.cached_tokens,
    cache_write_tokens: totals.cache_write_tokens,
    cost: microsToNumber(totals.cost_micros),
    charged: microsToNumber(totals.cost_micros - totals.uncovered_micros),
    uncovered: microsToNumber(totals.uncovered_micros),
    kwh: totals.kwh,
    kgco2eq: totals.kgco2eq,
  };
}

function recordView(record: UsageRecord) {
  return {
    id: record.id,
    time: new Date(record.time).toISOString(),
    user: record.user_id,
    key_id: record.key_id,
    model: record.router,
    requested_model: record.requested_router,
    provider: record.provider,
    endpoint: record.endpoint,
    status: record.status,
    prompt_tokens: record.prompt_tokens,
    completion_tokens: record.completion_tokens,
    total_tokens: record.prompt_tokens + record.completion_tokens,
    cached_tokens: record.cached_tokens,
    cache_write_tokens: record.cache_write_tokens,
    audio_seconds: record.audio_seconds,
    cost: microsToNumber(record.cost_micros),
    charged: microsToNumber(record.charged_micros),
    uncovered: microsToNumber(record.uncovered_micros),
    usage_anomaly: record.usage_anomaly,
    kwh: record.kwh,
    kgco2eq: record.kgco2eq,
    latency_ms: record.latency_ms,
    ttft_ms: record.ttft_ms,
    incomplete: record.incomplete,
  };
}
