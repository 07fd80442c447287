// A user's usage as status shows it, read from the store the gateways write: the balance, the
// request count of the current budget period (from daily totals: one hash per day, however many
// requests), and the time of the last request.
import type { Ledger } from '../../core/store/ledger.ts';
import type { UsageLog } from '../../core/store/usage-log.ts';
import { DAILY_TOTALS_DAYS, utcDay } from '../../core/store/usage-days.ts';
import type { Usage } from './user-state.ts';
import { DAY_MS, HOUR_MS } from '../../core/time.ts';

export interface UsageReader {
  readonly ledger: Pick<Ledger, 'balance'>;
  readonly usage: Pick<UsageLog, 'query' | 'dailyTotals'>;
}

/** What status already shows, so that a user without new requests costs two short reads. */
export interface ShownUsage {
  readonly lastRequestTime?: string | undefined;
  readonly requests?: number | undefined;
  readonly periodStart?: string | undefined;
}

export async function readUsage(store: UsageReader, userId: string, now: Date, shown: ShownUsage = {}): Promise<Usage> {
  const balance = await store.ledger.balance(userId, now.getTime());
  const lastRequestTime = await lastRequest(store, userId, now, shown.lastRequestTime);
  const unchanged =
    shown.requests !== undefined && lastRequestTime === shown.lastRequestTime && balance.periodStart?.toISOString() === shown.periodStart;
  const requests = unchanged ? shown.requests! : await countRequests(store, userId, now, balance.periodStart);
  return { balance, requests, lastRequestTime };
}

async function countRequests(store: UsageReader, userId: string, now: Date, periodStart: Date | null): Promise<number> {
  // Daily totals are kept DAILY_TOTALS_DAYS: without a period, "in all" means that far back.
  const oldest = now.getTime() - (DAILY_TOTALS_DAYS - 1) * DAY_MS;
  const from = Math.max(periodStart?.getTime() ?? oldest, oldest);
  const days = await store.usage.dailyTotals({ user: userId }, utcDay(from), utcDay(now.getTime()));
  return Object.values(days).reduce((sum, totals) => sum + totals.requests, 0);
}

/**
 * A query totals every record in its range, so the range is kept short: since the time already
 * known, or else the last hour, then the last day, and only then the whole retention.
 */
async function lastRequest(store: UsageReader, userId: string, now: Date, known: string | undefined): Promise<string | undefined> {
  const knownMs = known === undefined ? NaN : Date.parse(known);
  const windows = Number.isNaN(knownMs) ? [now.getTime() - HOUR_MS, now.getTime() - DAY_MS, undefined] : [knownMs];
  for (const from of windows) {
    const newest = (await store.usage.query(userId, { from, limit: 1 })).records[0];
    if (newest) return new Date(newest.time).toISOString();
  }
  return known;
}
