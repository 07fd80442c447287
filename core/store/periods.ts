// Budget periods on UTC calendar boundaries: a day, a week starting on Monday (ISO), a month.
// Each period has an index that only grows, so stores can roll forward and never back.
import type { BudgetPeriod } from '../resources/kinds.ts';
import { DAY_MS } from '../time.ts';

/** 1970-01-01 was a Thursday: shifting by 3 days makes weeks start on Monday. */
const MONDAY_SHIFT_DAYS = 3;

export function periodIndex(period: BudgetPeriod, now: number): number {
  const day = Math.floor(now / DAY_MS);
  switch (period) {
    case 'daily':
      return day;
    case 'weekly':
      return Math.floor((day + MONDAY_SHIFT_DAYS) / 7);
    case 'monthly': {
      const date = new Date(now);
      return date.getUTCFullYear() * 12 + date.getUTCMonth();
    }
  }
}

/** The first instant of period `index`. */
export function periodStart(period: BudgetPeriod, index: number): Date {
  switch (period) {
    case 'daily':
      return new Date(index * DAY_MS);
    case 'weekly':
      return new Date((index * 7 - MONDAY_SHIFT_DAYS) * DAY_MS);
    case 'monthly':
      return new Date(Date.UTC(Math.floor(index / 12), index % 12, 1));
  }
}

/** All three indices at once, for a store that learns the user's period only inside its script. */
export function periodIndices(now: number): Record<BudgetPeriod, number> {
  return { daily: periodIndex('daily', now), weekly: periodIndex('weekly', now), monthly: periodIndex('monthly', now) };
}

/** YYYY-MM-DD of a period's first day: how spent history is labelled. */
export function periodLabel(period: BudgetPeriod | null, index: number): string {
  return period === null ? 'all' : periodStart(period, index).toISOString().slice(0, 10);
}
