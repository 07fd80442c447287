// A gateway user (spec 2.6): who calls, what they may spend, and on which routers.
import { z } from 'zod';
import { parseDecimal } from '../money/decimal.ts';
import { ModelName, ResourceId } from './fields.ts';
import { BUDGET_PERIODS } from './kinds.ts';
import { RateLimitPolicy } from './limits.ts';

export const ROLES = ['admin', 'user'] as const;

/** Priorities of a user's waiting requests (queue mode); 0 is the default. */
export const PRIORITY_RANGE = { min: -10, max: 10 } as const;

/** An amount of money, in the money of router prices: at most 6 decimals (a cost has 6). */
export const Money = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const parsed = parseDecimal(typeof value === 'number' ? String(value) : value.trim(), 6);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', message: `amount ${parsed.reason}` });
    return z.NEVER;
  }
  if (parsed.value < 0n) {
    ctx.addIssue({ code: 'custom', message: 'amount must not be negative' });
    return z.NEVER;
  }
  return parsed.canonical;
});

export const UserSpec = z.strictObject({
  id: ResourceId.describe('User id.'),
  name: z.string().min(1, 'must not be empty').max(200).describe('Display name.'),
  role: z.enum(ROLES).default('user').describe('`admin` may use the admin API; `user` may not.'),
  budget: Money.nullable()
    .default(null)
    .describe('Most the user may spend (per period when one is set), in the money of router prices; null is unlimited.'),
  budget_period: z
    .enum(BUDGET_PERIODS)
    .nullable()
    .default(null)
    .describe('When spending resets, on UTC calendar boundaries (weeks start on Monday); null never resets.'),
  allowed_routers: z.array(ModelName).nullable().default(null).describe('Routers (names) the user may call; null allows all.'),
  priority: z
    .number()
    .int()
    .min(PRIORITY_RANGE.min)
    .max(PRIORITY_RANGE.max)
    .default(0)
    .describe(
      `Order of the user's requests waiting for a queue-mode router, from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}: higher first, a lower one ages forward.`,
    ),
  rate_limits: RateLimitPolicy.nullable()
    .default(null)
    .describe("Replaces the routers' rate limits for this user; null keeps the routers' own."),
});
export type UserSpec = z.output<typeof UserSpec>;
export type UserSpecInput = z.input<typeof UserSpec>;
