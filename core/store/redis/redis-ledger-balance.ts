// Reading a subject's balance from Redis (a user's, key's or team's budget): what is spent in the
// current period, what requests in flight hold, and the totals of past periods. Read by the account
// views and the operator, never by an admission: one MULTI of plain reads, no script.
import type { BudgetPeriod } from '../../resources/kinds.ts';
import type { Balance } from '../ledger.ts';
import { periodIndex, periodLabel, periodStart } from '../periods.ts';
import { levelKeys, type MoneyHome } from './keys.ts';
import type { RedisClient } from './redis-client.ts';

/** The balance of `subject` (an id, or ledger.ts subjectOf()) at `now`; `home` on a cluster (keys.ts). */
export async function readBalance(redis: RedisClient, subject: string, now: number, home?: MoneyHome): Promise<Balance> {
  const k = levelKeys(subject, home);
  const replies = await redis
    .multi()
    .hmget(k.budget, 'budget', 'period')
    .hmget(k.ledger, 'ptype', 'pidx', 'spent')
    .zrangebyscore(k.holds, `(${now}`, '+inf')
    .hgetall(k.history)
    .exec();
  const [[budget, periodText], [ptype, pidx, spent], live, historyRaw] = (replies ?? []).map(([, value]) => value) as [
    (string | null)[],
    (string | null)[],
    string[],
    Record<string, string>,
  ];
  const period = (periodText || null) as BudgetPeriod | null;
  const index = period ? periodIndex(period, now) : 0;
  // A period that has ended since the last request counts as nothing spent yet.
  const current = (ptype ?? '') === (period ?? '') && Number(pidx ?? 0) >= index;
  const history: Record<string, bigint> = {};
  for (const [key, micros] of Object.entries(historyRaw ?? {})) {
    const [kind, idx] = key.split(':') as [string, string];
    history[periodLabel((kind || null) as BudgetPeriod | null, Number(idx))] = BigInt(micros);
  }
  return {
    budgetMicros: budget ? BigInt(budget) : null,
    period,
    spentMicros: current ? BigInt(spent ?? 0) : 0n,
    reservedMicros: (live ?? []).reduce((sum, member) => sum + BigInt(member.slice(member.lastIndexOf('|') + 1)), 0n),
    periodStart: period ? periodStart(period, index) : null,
    periodEnd: period ? periodStart(period, index + 1) : null,
    history,
  };
}
