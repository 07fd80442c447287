// A settlement as the ledger script takes it (lua/settle.lua): what a request was charged against
// its hold, or, when a lease closes, what its hold shrinks to and the rate-limit room it gives back.
import { RATE_LIMIT_NAMES, type RateLimitName, type RateLimitPolicy } from '../../resources/limits.ts';
import type { BudgetLease, HoldChange } from './redis-budget-lease.ts';
import { limitsOf, stepTime, type StepTime } from './redis-ledger-common.ts';

/** One settlement of a batch (lua/settle.lua lists the fields). */
export interface SettleStep extends StepTime {
  readonly t: 's';
  readonly hold: string;
  readonly micros: string;
  readonly charge: string;
  readonly tokens: number;
  readonly limits: Partial<Record<RateLimitName, number>>;
  readonly after?: string;
  readonly ttl?: number;
  readonly granted_at?: number;
  readonly unused?: Partial<Record<RateLimitName, number>>;
  /** With the failover loss bound on (redis-durability.ts): the key marking it done, and for how long (ms). */
  readonly sk?: string;
  readonly keep?: number;
}

/** A hold as a settlement step sees it: `micros` before the step; a lease's also says what is left after it, held for `ttlMs`. */
export interface HoldStep {
  readonly id: string;
  readonly micros: bigint;
  readonly after?: bigint;
  readonly ttlMs?: number;
}

/** The lease's hold for a settlement step; no id when it has none (a lease of rate-limit room only). */
export function leaseHold(lease: BudgetLease, change: HoldChange): HoldStep {
  return { id: change.before > 0n ? lease.id : '', micros: change.before, after: change.after, ttlMs: lease.ttlMs };
}

/** One settle.lua step; `giveBack` when a lease closes (its unused room, in RATE_LIMIT_NAMES order). */
export function settleStep(
  now: number,
  hold: HoldStep | undefined,
  actualMicros: bigint,
  tokens: number,
  policy: RateLimitPolicy | undefined,
  giveBack?: { grantedAt: number; unused: readonly number[] },
): SettleStep {
  return {
    t: 's',
    ...stepTime(now),
    hold: hold?.id ?? '',
    micros: hold ? hold.micros.toString() : '0',
    charge: actualMicros.toString(),
    tokens,
    limits: limitsOf(policy),
    ...(hold?.after !== undefined && { after: hold.after.toString(), ttl: hold.ttlMs ?? 0 }),
    ...(giveBack && {
      granted_at: giveBack.grantedAt,
      unused: Object.fromEntries(RATE_LIMIT_NAMES.map((name, i) => [name, giveBack.unused[i] ?? 0])),
    }),
  };
}
