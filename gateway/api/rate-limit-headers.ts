// OpenAI's x-ratelimit-* headers: for requests and for tokens, the tighter of the minute and day
// limits (the one with the fewest remaining). Runs on every answer, so a caller without limits
// costs one comparison and no allocation.
import type { RateStatus, RateStatuses } from '../../core/store/ledger.ts';

const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** The header names, spelled out once: keys built per call cost more than the values. */
const NAMES = {
  requests: { limit: 'x-ratelimit-limit-requests', remaining: 'x-ratelimit-remaining-requests', reset: 'x-ratelimit-reset-requests' },
  tokens: { limit: 'x-ratelimit-limit-tokens', remaining: 'x-ratelimit-remaining-tokens', reset: 'x-ratelimit-reset-tokens' },
} as const;

export function rateLimitHeaders(rate: RateStatuses): Readonly<Record<string, string>> {
  const requests = tighter(rate.requests_per_minute, rate.requests_per_day);
  const tokens = tighter(rate.tokens_per_minute, rate.tokens_per_day);
  if (requests === undefined && tokens === undefined) return NONE;
  const headers: Record<string, string> = {};
  if (requests !== undefined) put(headers, 'requests', requests);
  if (tokens !== undefined) put(headers, 'tokens', tokens);
  return headers;
}

/** The status with fewer remaining; the minute's when they tie. */
function tighter(minute: RateStatus | undefined, day: RateStatus | undefined): RateStatus | undefined {
  if (minute === undefined) return day;
  if (day === undefined) return minute;
  return day.remaining < minute.remaining ? day : minute;
}

function put(headers: Record<string, string>, unit: keyof typeof NAMES, status: RateStatus): void {
  const names = NAMES[unit];
  headers[names.limit] = String(status.limit);
  headers[names.remaining] = String(status.remaining);
  headers[names.reset] = `${Math.ceil(status.resetMs / 1000)}s`;
}
