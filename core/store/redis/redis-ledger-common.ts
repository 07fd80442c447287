// What every step of the ledger script shares (lua/ledger-common.lua): the constants written into
// it from the TypeScript declarations, so window lengths and the order of the limits are declared
// once, and the fields each admission or settlement carries, its time and its limits.
import { RATE_LIMIT_NAMES, RATE_WINDOWS, type RateLimitName, type RateLimitPolicy } from '../../resources/limits.ts';
import { DAY_MS } from '../../time.ts';
import { periodIndices } from '../periods.ts';
import { keys } from './keys.ts';

/** Names of a limit's three fields in the rate-limit hash (`rpm.s`, `rpm.c`, `rpm.p`): stored data, so they never change. */
const WINDOW_FIELDS: Record<RateLimitName, string> = {
  requests_per_minute: 'rpm',
  requests_per_day: 'rpd',
  tokens_per_minute: 'tpm',
  tokens_per_day: 'tpd',
};

/**
 * A rate-limit hash lives this long after its last window rolled: the longest window and the one
 * before it, which is all its counters remember.
 */
const WINDOW_HASH_TTL_MS = 2 * Math.max(...Object.values(RATE_WINDOWS).map((w) => w.windowMs));
if (WINDOW_HASH_TTL_MS !== 2 * DAY_MS) throw new Error('a rate-limit window longer than a day needs its hash kept longer');

/** Alerts the stream keeps (roughly: MAXLEN ~), delivered or not: far more than are ever raised between deliveries. */
export const ALERTS_KEPT = 10_000;

/** How many keys one level's set has (redis-ledger-batch.ts subjectKeys): budget, ledger, holds, history, rate limits. */
export const KEY_SET_SIZE = 5;

/**
 * The ledger scripts' constants, written from the TypeScript declarations (resources/limits.ts),
 * so window lengths and the order of the limits are declared once; for a Redis Cluster with
 * `cluster` (lua/ledger-common.lua).
 */
export function ledgerPrelude(cluster = false): string {
  const windows = RATE_LIMIT_NAMES.map((name) => {
    const f = WINDOW_FIELDS[name];
    const { windowMs, unit } = RATE_WINDOWS[name];
    return `  ${name} = { window = ${windowMs}, unit = '${unit}', s = '${f}.s', c = '${f}.c', p = '${f}.p' },`;
  });
  return [
    `local WINDOWS = {\n${windows.join('\n')}\n}`,
    `local LIMIT_NAMES = { ${RATE_LIMIT_NAMES.map((name) => `'${name}'`).join(', ')} }`,
    `local WINDOW_HASH_TTL_MS = ${WINDOW_HASH_TTL_MS}`,
    // On a cluster the alerts stream is in another slot than a batch's keys: '' returns the alerts instead.
    `local ALERTS_STREAM = '${cluster ? '' : keys.alerts}'`,
    `local ALERTS_KEPT = ${ALERTS_KEPT}`,
    `local KEY_SET_SIZE = ${KEY_SET_SIZE}`,
  ].join('\n');
}

/** Fields every step has (lua/ledger-common.lua): its time and the period indices of that time, as text. */
export interface StepTime {
  readonly now: number;
  readonly day: string;
  readonly week: string;
  readonly month: string;
}

/** The time fields of a step made at `now`. */
export function stepTime(now: number): StepTime {
  const { daily, weekly, monthly } = periodIndices(now);
  return { now, day: String(daily), week: String(weekly), month: String(monthly) };
}

/** The limits a policy sets, by name (the scripts take an absent one as "no limit"). */
export function limitsOf(policy: RateLimitPolicy | undefined): Partial<Record<RateLimitName, number>> {
  const limits: Partial<Record<RateLimitName, number>> = {};
  if (policy) for (const name of RATE_LIMIT_NAMES) if (policy[name] !== undefined) limits[name] = policy[name];
  return limits;
}
