// A user's usage for status: requests counted from daily totals since the period began, and the
// last request found by looking at short time windows first (a query totals its whole range);
// no new request since what status shows, and the count is not read again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Balance } from '../../../core/store/ledger.ts';
import { EMPTY_TOTALS, type UsageQuery } from '../../../core/store/usage-log.ts';
import { readUsage, type UsageReader } from '../../../operator/reconcile/user-usage.ts';

const NOW = new Date('2026-11-10T12:00:00Z');
const HOUR = 3_600_000;

function fakeStore(lastRequest: number | undefined, periodStart: Date | null) {
  const queries: (number | undefined)[] = [];
  const dayRanges: string[] = [];
  const balance: Balance = {
    budgetMicros: null,
    spentMicros: 0n,
    reservedMicros: 0n,
    period: periodStart ? 'monthly' : null,
    periodStart,
    periodEnd: null,
    history: {},
  };
  const store: UsageReader = {
    ledger: { balance: async () => balance },
    usage: {
      dailyTotals: async (_subject, from, to) => {
        dayRanges.push(`${from}..${to}`);
        return { '2026-11-02': { ...EMPTY_TOTALS, requests: 2 }, '2026-11-10': { ...EMPTY_TOTALS, requests: 3 } };
      },
      query: async (_user, query: UsageQuery) => {
        queries.push(query.from);
        const found = lastRequest !== undefined && lastRequest >= (query.from ?? 0);
        return { records: found ? [{ time: lastRequest } as never] : [], next: null, totals: EMPTY_TOTALS };
      },
    },
  };
  return { store, queries, dayRanges };
}

test('requests are summed over the days of the current period', async () => {
  const { store, dayRanges } = fakeStore(undefined, new Date('2026-11-01T00:00:00Z'));
  assert.equal((await readUsage(store, 'alice', NOW)).requests, 5);
  assert.deepEqual(dayRanges, ['2026-11-01..2026-11-10']);
});

test('without a period, as far back as daily totals are kept', async () => {
  const { store, dayRanges } = fakeStore(undefined, null);
  await readUsage(store, 'alice', NOW);
  assert.deepEqual(dayRanges, ['2025-10-07..2026-11-10']);
});

test('the last request: since the time already known, when there is one', async () => {
  const { store, queries } = fakeStore(NOW.getTime() - 10_000, null);
  const known = new Date(NOW.getTime() - 60_000).toISOString();
  assert.equal(
    (await readUsage(store, 'alice', NOW, { lastRequestTime: known })).lastRequestTime,
    new Date(NOW.getTime() - 10_000).toISOString(),
  );
  assert.deepEqual(queries, [NOW.getTime() - 60_000]);
});

test('the last request, none known: the last hour, then the last day, then all', async () => {
  const { store, queries } = fakeStore(NOW.getTime() - 5 * HOUR, null);
  assert.equal((await readUsage(store, 'alice', NOW)).lastRequestTime, new Date(NOW.getTime() - 5 * HOUR).toISOString());
  assert.deepEqual(queries, [NOW.getTime() - HOUR, NOW.getTime() - 24 * HOUR]);
  const never = fakeStore(undefined, null);
  assert.equal((await readUsage(never.store, 'alice', NOW)).lastRequestTime, undefined);
  assert.deepEqual(never.queries, [NOW.getTime() - HOUR, NOW.getTime() - 24 * HOUR, undefined]);
});

test('no request since what status shows, same period: the count shown stands and daily totals are not read', async () => {
  const last = new Date(NOW.getTime() - 10_000).toISOString();
  const periodStart = new Date('2026-11-01T00:00:00Z');
  const { store, dayRanges } = fakeStore(Date.parse(last), periodStart);
  const shown = { lastRequestTime: last, requests: 7, periodStart: periodStart.toISOString() };
  assert.equal((await readUsage(store, 'alice', NOW, shown)).requests, 7);
  assert.deepEqual(dayRanges, []);
  const newPeriod = await readUsage(store, 'alice', NOW, { ...shown, periodStart: '2026-10-01T00:00:00.000Z' });
  assert.equal(newPeriod.requests, 5, 'a new period counts again');
});
