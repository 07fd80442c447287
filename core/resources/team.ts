// A team: users who share a budget and limits of their own, on top of each user's. A request of a
// team's user is held and charged at the team's level too (store/ledger.ts), so the team is never
// overspent whatever its users' own budgets add up to.
import { z } from 'zod';
import { ResourceId } from './fields.ts';
import { RateLimitPolicy } from './limits.ts';
import { budgetFields, Priority, PRIORITY_RANGE } from './user.ts';

export const TeamSpec = z.strictObject({
  id: ResourceId.describe('Team id.'),
  name: z.string().min(1, 'must not be empty').max(200).describe('Display name.'),
  ...budgetFields('team, all its users together,'),
  priority: Priority.default(0).describe(
    `Priority of the team's users who have none of their own (queue mode), from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}.`,
  ),
  rate_limits: RateLimitPolicy.nullable()
    .default(null)
    .describe("Limits on all the team's users together, per router, besides each user's own; null for none."),
});
export type TeamSpec = z.output<typeof TeamSpec>;
export type TeamSpecInput = z.input<typeof TeamSpec>;
