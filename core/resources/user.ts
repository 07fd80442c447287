// A gateway user (spec 2.6): who calls, what they may spend, and on which routers.
import { z } from 'zod';
import { parseDecimal } from '../money/decimal.ts';
import { ModelName, ResourceId } from './fields.ts';
import { BUDGET_PERIODS } from './kinds.ts';
import { RateLimitPolicy } from './limits.ts';
import { Subject } from './subjects.ts';

export const ROLES = ['admin', 'team_admin', 'user'] as const;
export type Role = (typeof ROLES)[number];

/** Priorities of a user's waiting requests (queue mode); 0 is the default. */
export const PRIORITY_RANGE = { min: -10, max: 10 } as const;

/**
 * An amount written as text: digits, then a point and decimals if any; no exponent, spaces, sign
 * or leading zeros. The shape of the CRDs' MoneyString (kubernetes/kube-fields.ts), whose bounds
 * (15 digits, 6 decimals) parseDecimal checks, each with a message of its own.
 */
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * An amount of money, in the money of router prices: at most 6 decimals (a cost has 6). Text is
 * a plain decimal, as the docs say: "1e3" or " 5 " is refused rather than read as 1000 or 5. A
 * JSON number is read from String(), which writes an exponent only below 1e-6 or from 1e21:
 * parseDecimal reads it exactly, and refuses such an amount as too precise or too large.
 */
export const Money = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const refuse = (message: string) => {
    ctx.addIssue({ code: 'custom', message: `amount ${message}` });
    return z.NEVER;
  };
  if (typeof value === 'string') {
    if (value.startsWith('-') && PLAIN_DECIMAL.test(value.slice(1))) return refuse('must not be negative');
    if (!PLAIN_DECIMAL.test(value))
      return refuse(
        `must be a decimal number written as digits, with a point and at most 6 decimals, such as "25.50" (no exponent, spaces or sign), got ${JSON.stringify(value)}`,
      );
  }
  const parsed = parseDecimal(typeof value === 'number' ? String(value) : value, 6);
  if (!parsed.ok) return refuse(parsed.reason);
  if (parsed.value < 0n) return refuse('must not be negative');
  return parsed.canonical;
});

export const Priority = z.number().int().min(PRIORITY_RANGE.min).max(PRIORITY_RANGE.max);

/** Alert thresholds, in percent of a budget: each fires once per budget period (docs/budgets.md). */
export const BudgetAlerts = z
  .array(z.number().int().min(1).max(1000))
  .max(10, 'at most 10 thresholds')
  .transform((percents) => [...new Set(percents)].sort((a, b) => a - b));

/** A budget and what goes with it, as users, teams and API keys have them. */
export const budgetFields = (whose: string) => ({
  budget: Money.nullable()
    .default(null)
    .describe(`Most the ${whose} may spend (per period when one is set), in the money of router prices; null is unlimited.`),
  budget_period: z
    .enum(BUDGET_PERIODS)
    .nullable()
    .default(null)
    .describe('When spending resets, on UTC calendar boundaries (weeks start on Monday); null never resets.'),
  allowed_routers: z.array(ModelName).nullable().default(null).describe(`Routers (names) the ${whose} may call; null allows all.`),
  budget_alerts: BudgetAlerts.nullable()
    .default(null)
    .describe('Percentages of the budget at which an alert is raised, once per period each (e.g. [50, 80, 100]); null for none.'),
  soft_budget: z.boolean().default(false).describe('A soft budget only alerts: it never refuses a request, and what is spent may pass it.'),
});

export const UserSpec = z.strictObject({
  id: ResourceId.describe('User id.'),
  name: z.string().min(1, 'must not be empty').max(200).describe('Display name.'),
  role: z
    .enum(ROLES)
    .default('user')
    .describe("`admin` may use the whole admin API; `team_admin` manages their own team's users and keys; `user` neither."),
  team: ResourceId.nullable()
    .default(null)
    .describe('The team (its id) the user belongs to, whose budget and limits also apply; null for none.'),
  ...budgetFields('user'),
  priority: Priority.nullable()
    .default(null)
    .describe(
      `Order of the user's requests waiting for a queue-mode router, from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}: higher first, a lower one ages forward; null takes the team's (0 without a team).`,
    ),
  rate_limits: RateLimitPolicy.nullable()
    .default(null)
    .describe("Replaces the routers' rate limits for this user; null keeps the routers' own."),
  subjects: z
    .array(Subject)
    .max(20)
    .nullable()
    .default(null)
    .describe(
      'Identities that call as this user with a token, each `<issuer>#<subject>`: the name of an issuer of the identity file and the value of its user claim (`sub`, or an email), e.g. `kubernetes#system:serviceaccount:apps:summarizer`; only an admin sets them; null for none.',
    ),
});
export type UserSpec = z.output<typeof UserSpec>;
export type UserSpecInput = z.input<typeof UserSpec>;
