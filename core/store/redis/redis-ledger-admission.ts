// An admission as the ledger script takes it and answers it (lua/admit.lua): the fields of the
// step sent, and the reply read back into an AdmissionResult, with the rate-limit statuses the
// script lists in LIMIT_NAMES order.
import type { RateLimitName } from '../../resources/limits.ts';
import type { AdmissionResult, LevelName, RateStatuses } from '../ledger.ts';
import type { StepTime } from './redis-ledger-common.ts';

/** One admission of a batch (lua/admit.lua lists the fields). */
export interface AdmitStep extends StepTime {
  readonly t: 'a';
  readonly hold: string;
  readonly micros: string;
  readonly ttl: number;
  readonly tokens: number;
  readonly limits: Partial<Record<RateLimitName, number>>;
  readonly lease: string;
  readonly size: number;
  readonly headroom: number;
  readonly open_ms: number;
  readonly may_wait: boolean;
}

/** An admission's reply (lua/admit.lua): the result, and the size of the lease granted with it. */
export type AdmitReply = { result: AdmissionResult; leased: number } | { busyUntil: number };

export function readAdmission(reply: (string | number)[]): AdmitReply {
  switch (reply[0]) {
    case 'unknown_user':
      return { result: { ok: false, reason: 'unknown_user' }, leased: 0 };
    case 'budget':
      return { result: { ok: false, reason: 'budget', level: reply[2] as LevelName, remainingMicros: BigInt(reply[1]!) }, leased: 0 };
    case 'rate':
      return {
        result: {
          ok: false,
          reason: 'rate',
          level: reply[3] as LevelName,
          limit: reply[1] as RateLimitName,
          retryAfterMs: Number(reply[2]),
          rate: readStatuses(reply, 4),
        },
        leased: 0,
      };
    case 'busy':
      return { busyUntil: Number(reply[1]) };
    default: {
      const rate = readStatuses(reply, 4);
      const result: AdmissionResult =
        reply[2] === ''
          ? { ok: true, rate }
          : { ok: true, rate, budget: { level: reply[2] as LevelName, remainingMicros: BigInt(reply[3]!) } };
      return { result, leased: Number(reply[1]) };
    }
  }
}

/** Each limit's status at the level where it has least room (a limit set at several levels comes once per level). */
function readStatuses(reply: (string | number)[], from: number): RateStatuses {
  const out: RateStatuses = {};
  for (let i = from; i + 3 < reply.length; i += 4) {
    const name = reply[i] as RateLimitName;
    const remaining = Number(reply[i + 2]);
    const seen = out[name];
    if (seen === undefined || remaining < seen.remaining)
      out[name] = { limit: Number(reply[i + 1]), remaining, resetMs: Number(reply[i + 3]) };
  }
  return out;
}
