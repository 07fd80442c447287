// Where the budgets near their end stand, for tollgate_budget_used_ratio: learnt from the budget
// alerts this gateway delivers (each alert reaches one gateway of the fleet, so the dashboard
// reads the max over gateways). An alert's standing holds until its period ends, when the budget
// starts again from nothing; a budget that raised no alert this period is not shown.
import type { BudgetAlert } from '../../core/store/budget-alerts.ts';
import type { BudgetPeriod } from '../../core/resources/kinds.ts';
import { periodIndex } from '../../core/store/periods.ts';
import type { BudgetUse } from './metrics.ts';

/** Budgets kept at most: the oldest standing goes first beyond it, so the metric stays bounded. */
export const MAX_BUDGETS_SHOWN = 10_000;

interface Standing extends BudgetUse {
  readonly period: BudgetPeriod | null;
  readonly index: number;
}

const PERIODS: ReadonlySet<string> = new Set<BudgetPeriod>(['daily', 'weekly', 'monthly']);

export class BudgetStanding {
  readonly #byBudget = new Map<string, Standing>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** An alert was delivered: its budget's share spent, or 1 when it ran out. */
  reached(alert: BudgetAlert): void {
    const [kind = '', index = '0'] = alert.period.split(':');
    const period = PERIODS.has(kind) ? (kind as BudgetPeriod) : null;
    const spent = alert.budgetMicros > 0n ? Number(alert.spentMicros) / Number(alert.budgetMicros) : 1;
    const ratio = alert.exhausted ? Math.max(1, spent) : spent;
    const key = `${alert.level}\u0000${alert.id}`;
    const known = this.#byBudget.get(key);
    // Alerts of one period arrive in any order (retries): the highest standing of the newest period holds.
    const newer = known === undefined || Number(index) > known.index || (Number(index) === known.index && ratio > known.ratio);
    if (!newer) return;
    this.#byBudget.delete(key);
    this.#byBudget.set(key, { level: alert.level, id: alert.id, ratio, period, index: Number(index) });
    if (this.#byBudget.size > MAX_BUDGETS_SHOWN) this.#byBudget.delete(this.#byBudget.keys().next().value!);
  }

  /** The standings of the current periods; those of ended periods are dropped. */
  *current(): Iterable<BudgetUse> {
    const now = this.#now();
    for (const [key, standing] of this.#byBudget) {
      if (standing.period !== null && periodIndex(standing.period, now) !== standing.index) {
        this.#byBudget.delete(key);
        continue;
      }
      yield standing;
    }
  }
}
