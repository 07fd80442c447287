// UTC days, as daily usage totals are labelled.

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Daily totals are kept this long (and no longer asked for). */
export const DAILY_TOTALS_DAYS = 400;

/** The UTC day (YYYY-MM-DD) of a time in ms. */
export function utcDay(time: number): string {
  const day = Math.floor(time / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastLabel = new Date(day * DAY_MS).toISOString().slice(0, 10);
  }
  return lastLabel;
}
// Almost every call asks for today: remember the last answer.
import { DAY_MS } from '../time.ts';
let lastDay = NaN;
let lastLabel = '';

/** Every UTC day from `fromDay` to `toDay`, both included; none when `fromDay` is later. */
export function daysBetween(fromDay: string, toDay: string): string[] {
  const from = dayStart(fromDay);
  const to = dayStart(toDay);
  if (to - from >= DAILY_TOTALS_DAYS * DAY_MS)
    throw new RangeError(`daily totals span at most ${DAILY_TOTALS_DAYS} days, asked ${fromDay} to ${toDay}`);
  const days: string[] = [];
  for (let time = from; time <= to; time += DAY_MS) days.push(utcDay(time));
  return days;
}

function dayStart(day: string): number {
  const time = Date.parse(`${day}T00:00:00Z`);
  if (!DAY.test(day) || Number.isNaN(time) || utcDay(time) !== day) throw new RangeError(`not a day (YYYY-MM-DD): "${day}"`);
  return time;
}
