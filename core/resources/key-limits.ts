// What an API key may spend and call, narrower than its user: one key per application, each with
// a budget and limits of its own. A key with a budget or limits is a level of its requests
// (store/ledger.ts), held and charged with the user's and the team's.
import { z } from 'zod';
import { RateLimitPolicy } from './limits.ts';
import { budgetFields } from './user.ts';

export const KeyLimits = z.strictObject({
  ...budgetFields('key'),
  rate_limits: RateLimitPolicy.nullable()
    .default(null)
    .describe("Limits on this key's requests, per router, besides its user's; null for none."),
});
export type KeyLimits = z.output<typeof KeyLimits>;
export type KeyLimitsInput = z.input<typeof KeyLimits>;

/** Whether a key's limits make it a level of its requests (it has a budget or rate limits). */
export function isKeyLevel(limits: Partial<KeyLimits>): boolean {
  return (limits.budget ?? null) !== null || (limits.rate_limits ?? null) !== null;
}

/** A stored key's limits, whole (a key stored before keys had limits, or some of them, has none). */
export function keyLimitsOf(key: Partial<KeyLimits>): KeyLimits {
  return {
    budget: key.budget ?? null,
    budget_period: key.budget_period ?? null,
    allowed_routers: key.allowed_routers ?? null,
    budget_alerts: key.budget_alerts ?? null,
    soft_budget: key.soft_budget ?? false,
    rate_limits: key.rate_limits ?? null,
  };
}
