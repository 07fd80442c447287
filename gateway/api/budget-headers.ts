// Headers that let an application watch its own budget: on every answer charged to a budget, the
// room left at the level with least of it (after this request's worst-case hold), and which level
// that is; on a refusal, the level that refused.
import type { BudgetStatus } from '../../core/store/ledger.ts';
import { microsToDecimal } from '../metering/cost.ts';

/** The level (key, user, team) whose budget or rate limit refused a request (402 or 429). */
export const LIMIT_LEVEL_HEADER = 'x-tollgate-limit-level';
/** Room left, in the money of router prices, at the level with least of it. */
export const BUDGET_REMAINING_HEADER = 'x-tollgate-budget-remaining';
/** Which level that is: key, user or team. */
export const BUDGET_LEVEL_HEADER = 'x-tollgate-budget-level';

/** Adds the budget headers to `headers` when the request was held against a budget. */
export function putBudgetHeaders(headers: Record<string, string>, budget: BudgetStatus | undefined): Record<string, string> {
  if (budget !== undefined) {
    headers[BUDGET_REMAINING_HEADER] = microsToDecimal(budget.remainingMicros);
    headers[BUDGET_LEVEL_HEADER] = budget.level;
  }
  return headers;
}
