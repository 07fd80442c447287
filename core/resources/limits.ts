// Rate-limit policy (spec 8.4): set on a router, overridable per user, counted per user.
import { z } from 'zod';
import { DAY_MS, MINUTE_MS } from '../time.ts';

const PerWindow = z.number().int().min(1).max(1_000_000_000_000);

export const RateLimitPolicy = z
  .strictObject({
    requests_per_minute: PerWindow.optional().describe('Requests a user may make to the router in any 60-second window.'),
    requests_per_day: PerWindow.optional().describe('Requests a user may make to the router in any 24-hour window.'),
    tokens_per_minute: PerWindow.optional().describe(
      'Tokens (prompt at admission, completion at settlement) per user in any 60-second window.',
    ),
    tokens_per_day: PerWindow.optional().describe('Tokens per user in any 24-hour window.'),
  })
  .describe('Rate limits; an absent field means no limit of that kind.');
export type RateLimitPolicy = z.output<typeof RateLimitPolicy>;

export const RATE_WINDOWS = {
  requests_per_minute: { unit: 'requests', windowMs: MINUTE_MS },
  requests_per_day: { unit: 'requests', windowMs: DAY_MS },
  tokens_per_minute: { unit: 'tokens', windowMs: MINUTE_MS },
  tokens_per_day: { unit: 'tokens', windowMs: DAY_MS },
} as const satisfies Record<keyof RateLimitPolicy, { unit: 'requests' | 'tokens'; windowMs: number }>;
export type RateLimitName = keyof typeof RATE_WINDOWS;

/** The limits in one fixed order, the order the Redis ledger's scripts take them in. */
export const RATE_LIMIT_NAMES = Object.keys(RATE_WINDOWS) as readonly RateLimitName[];
