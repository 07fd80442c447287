// OpenAI's x-ratelimit-* headers: for requests and for tokens, the tighter of the minute and day
// limits (the one with the fewest remaining).
import type { RateStatus, RateStatuses } from '../store/ledger.ts';

export function rateLimitHeaders(rate: RateStatuses): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [unit, statuses] of [
    ['requests', [rate.requests_per_minute, rate.requests_per_day]],
    ['tokens', [rate.tokens_per_minute, rate.tokens_per_day]],
  ] as const) {
    const tightest = statuses.filter((s): s is RateStatus => s !== undefined).sort((a, b) => a.remaining - b.remaining)[0];
    if (!tightest) continue;
    headers[`x-ratelimit-limit-${unit}`] = String(tightest.limit);
    headers[`x-ratelimit-remaining-${unit}`] = String(tightest.remaining);
    headers[`x-ratelimit-reset-${unit}`] = `${Math.ceil(tightest.resetMs / 1000)}s`;
  }
  return headers;
}
