// A team: users who share a budget and limits of their own, on top of each user's. A request of a
// team's user is held and charged at the team's level too (store/ledger.ts), so the team is never
// overspent whatever its users' own budgets add up to.
import { z } from 'zod';
import { ResourceId } from './fields.ts';
import { RateLimitPolicy } from './limits.ts';
import { budgetFields, Priority, PRIORITY_RANGE } from './user.ts';

/** A group as an identity provider names it in a token's groups claim (gateway/identity). */
export const GroupName = z.string().min(1, 'must not be empty').max(256);

/** Groups of tokens' callers, as a team lists them: null or absent lists none. */
const groupList = (description: string) => z.array(GroupName).max(100).nullable().default(null).describe(description);

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
  oidc_groups: groupList(
    "Groups whose members belong to this team when they call with a token (a groups claim's values, or `system:serviceaccounts:<namespace>` for a Kubernetes service account's); null for none.",
  ),
  oidc_admin_groups: groupList("Groups whose members are this team's team admins when they call with a token; null for none."),
});
export type TeamSpec = z.output<typeof TeamSpec>;
export type TeamSpecInput = z.input<typeof TeamSpec>;
