// tollgate_budget_used_ratio (observability/budget-standing.ts): each budget's standing from the
// alerts this gateway delivered, the highest of its newest period, 1 once it ran out, and gone
// when its period ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayMetrics } from '../../../gateway/observability/metrics.ts';
import { BudgetStanding, MAX_BUDGETS_SHOWN } from '../../../gateway/observability/budget-standing.ts';
import type { BudgetAlert } from '../../../core/store/budget-alerts.ts';
import { periodIndex } from '../../../core/store/periods.ts';

const DAY = 86_400_000;
const start = Date.UTC(2026, 10, 27, 9);
const today = `daily:${periodIndex('daily', start)}`;

const alert = (over: Partial<BudgetAlert>): BudgetAlert => ({
  key: 'k',
  level: 'user',
  id: 'alice',
  user: 'alice',
  percent: 80,
  budgetMicros: 10_000_000n,
  spentMicros: 8_000_000n,
  exhausted: false,
  period: today,
  at: start,
  ...over,
});

async function scrape(standing: BudgetStanding): Promise<string[]> {
  const metrics = new GatewayMetrics({ processMetrics: false });
  metrics.trackBudgets(() => standing.current());
  const text = await metrics.registry.getSingleMetricAsString('tollgate_budget_used_ratio');
  return text.split('\n').filter((line) => !line.startsWith('#'));
}

test("a budget's standing is the highest share of its period its alerts reported, whatever their order", async () => {
  const standing = new BudgetStanding(() => start);
  standing.reached(alert({ percent: 90, spentMicros: 9_100_000n }));
  standing.reached(alert({ percent: 80, spentMicros: 8_000_000n }));
  standing.reached(alert({ level: 'team', id: 'search', spentMicros: 5_000_000n, percent: 50 }));
  assert.deepEqual(await scrape(standing), [
    'tollgate_budget_used_ratio{level="user",id="alice"} 0.91',
    'tollgate_budget_used_ratio{level="team",id="search"} 0.5',
  ]);
});

test('a budget that ran out stands at 1, though less than all of it was spent', async () => {
  const standing = new BudgetStanding(() => start);
  standing.reached(alert({ percent: 100, spentMicros: 9_990_000n, exhausted: true }));
  assert.deepEqual(await scrape(standing), ['tollgate_budget_used_ratio{level="user",id="alice"} 1']);
});

test('when its period ends the budget starts again, and is no longer shown', async () => {
  let now = start;
  const standing = new BudgetStanding(() => now);
  standing.reached(alert({}));
  standing.reached(alert({ level: 'key', id: 'k1', period: ':0' }));
  now = start + DAY;
  assert.deepEqual(await scrape(standing), ['tollgate_budget_used_ratio{level="key",id="k1"} 0.8']);
  // The new period's first alert is shown, and an old one arriving late does not replace it.
  standing.reached(alert({ percent: 50, spentMicros: 5_000_000n, period: `daily:${periodIndex('daily', now)}` }));
  standing.reached(alert({ percent: 90, spentMicros: 9_000_000n }));
  assert.deepEqual(await scrape(standing), [
    'tollgate_budget_used_ratio{level="key",id="k1"} 0.8',
    'tollgate_budget_used_ratio{level="user",id="alice"} 0.5',
  ]);
});

test('the budgets shown are bounded: past the bound the oldest standing goes', async () => {
  const standing = new BudgetStanding(() => start);
  for (let i = 0; i <= MAX_BUDGETS_SHOWN; i++) standing.reached(alert({ id: `u${i}` }));
  const ids = [...standing.current()].map((use) => use.id);
  assert.equal(ids.length, MAX_BUDGETS_SHOWN);
  assert.equal(ids[0], 'u1');
});
