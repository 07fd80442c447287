// The ledger of a single process, with the same semantics as the Redis scripts (lua/admit.lua,
// lua/settle.lua). Every method runs to completion without awaiting, so each is atomic.
import { RATE_WINDOWS, type RateLimitName } from '../../resources/limits.ts';
import type { BudgetPeriod } from '../../resources/kinds.ts';
import { parseDecimal } from '../../money/decimal.ts';
import type { UserRecord } from '../accounts.ts';
import type { Admission, AdmissionResult, Balance, Ledger, Settlement, SettleResult } from '../ledger.ts';
import { periodIndex, periodLabel, periodStart } from '../periods.ts';
import { check, FRESH, limitsOf, rolled, statuses, type WindowCounter, type WindowCheck } from '../sliding-window.ts';

interface UserLedger {
  ptype: BudgetPeriod | null;
  pidx: number;
  spent: bigint;
  reserved: bigint;
  holds: Map<string, { micros: bigint; expires: number }>;
  /** No hold expires before this (ms): until then there is nothing to release. */
  nextExpiry: number;
  /** `<period kind>:<index>` -> spent, as the Redis store keeps it. */
  history: Map<string, bigint>;
  /** scope -> limit -> counter */
  windows: Map<string, Map<RateLimitName, WindowCounter>>;
}

export class MemoryLedger implements Ledger {
  readonly #users: (id: string) => UserRecord | undefined;
  readonly #ledgers = new Map<string, UserLedger>();

  constructor(users: (id: string) => UserRecord | undefined) {
    this.#users = users;
  }

  async admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    const user = this.#users(userId);
    if (!user) return { ok: false, reason: 'unknown_user' };
    const ledger = this.#prepare(userId, user, admission.now);
    const rate = admission.rate;
    const counters = rate ? this.#counters(ledger, rate.scope) : undefined;
    const checks: WindowCheck[] = rate
      ? limitsOf(rate.policy).map(([name, limit]) =>
          check(name, limit, counters!.get(name) ?? FRESH, admission.now, RATE_WINDOWS[name].unit === 'requests' ? 1 : rate.tokens),
        )
      : [];
    let worst: WindowCheck | undefined;
    for (const c of checks) if (c.retryMs > 0 && (!worst || c.retryMs > worst.retryMs)) worst = c;
    if (worst) return { ok: false, reason: 'rate', limit: worst.name, retryAfterMs: worst.retryMs, rate: statuses(checks, false) };

    const budget = budgetMicros(user);
    const hold = admission.reservation;
    if (budget !== null && hold) {
      const remaining = budget - ledger.spent - ledger.reserved;
      if (hold.micros > remaining) return { ok: false, reason: 'budget', remainingMicros: remaining < 0n ? 0n : remaining };
    }
    for (const c of checks) counters!.set(c.name, { ...c.counter, cur: c.counter.cur + c.cost });
    if (hold) {
      const expires = admission.now + hold.ttlMs;
      ledger.holds.set(hold.id, { micros: hold.micros, expires });
      ledger.reserved += hold.micros;
      if (expires < ledger.nextExpiry) ledger.nextExpiry = expires;
    }
    return { ok: true, rate: statuses(checks, true) };
  }

  async settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    const user = this.#users(userId);
    if (!user) return { chargedMicros: 0n };
    const ledger = this.#prepare(userId, user, settlement.now);
    const hold = settlement.reservation && ledger.holds.get(settlement.reservation.id);
    if (hold && settlement.reservation && hold.micros === settlement.reservation.micros) {
      ledger.holds.delete(settlement.reservation.id);
      ledger.reserved -= hold.micros;
    }
    let charge = settlement.actualMicros;
    const budget = budgetMicros(user);
    if (budget !== null) {
      let room = budget - ledger.spent - ledger.reserved;
      if (room < 0n) room = 0n;
      if (charge > room) charge = room;
    }
    if (charge > 0n) {
      ledger.spent += charge;
      const label = `${ledger.ptype ?? ''}:${ledger.pidx}`;
      ledger.history.set(label, (ledger.history.get(label) ?? 0n) + charge);
    }
    const rate = settlement.rate;
    if (rate && rate.tokens > 0) {
      const counters = this.#counters(ledger, rate.scope);
      for (const [name] of limitsOf(rate.policy)) {
        if (RATE_WINDOWS[name].unit !== 'tokens') continue;
        const counter = rolled(counters.get(name) ?? FRESH, settlement.now, RATE_WINDOWS[name].windowMs);
        counters.set(name, { ...counter, cur: counter.cur + rate.tokens });
      }
    }
    return { chargedMicros: charge };
  }

  async balance(userId: string, now: number): Promise<Balance> {
    const user = this.#users(userId);
    const ledger = user ? this.#prepare(userId, user, now) : undefined;
    const period = user?.budget_period ?? null;
    const index = period ? periodIndex(period, now) : 0;
    const history: Record<string, bigint> = {};
    for (const [key, micros] of ledger?.history ?? []) {
      const [kind, idx] = key.split(':') as [string, string];
      history[periodLabel((kind || null) as BudgetPeriod | null, Number(idx))] = micros;
    }
    return {
      budgetMicros: user ? budgetMicros(user) : null,
      period,
      spentMicros: ledger?.spent ?? 0n,
      reservedMicros: ledger?.reserved ?? 0n,
      periodStart: period ? periodStart(period, index) : null,
      periodEnd: period ? periodStart(period, index + 1) : null,
      history,
    };
  }

  /** Forgets a deleted user's money and limits. */
  forget(userId: string): void {
    this.#ledgers.delete(userId);
  }

  /** The user's ledger at `now`: period rolled forward, expired holds released. */
  #prepare(userId: string, user: UserRecord, now: number): UserLedger {
    let ledger = this.#ledgers.get(userId);
    if (!ledger) {
      ledger = {
        ptype: null,
        pidx: 0,
        spent: 0n,
        reserved: 0n,
        holds: new Map(),
        nextExpiry: Infinity,
        history: new Map(),
        windows: new Map(),
      };
      this.#ledgers.set(userId, ledger);
    }
    const ptype = user.budget_period;
    const pidx = ptype ? periodIndex(ptype, now) : 0;
    if (ledger.ptype !== ptype) {
      ledger.ptype = ptype;
      ledger.pidx = pidx;
    } else if (pidx > ledger.pidx) {
      ledger.pidx = pidx;
      ledger.spent = 0n;
    }
    // Every admission and settlement comes here: the holds in flight are looked at only once one
    // may have expired (a settled hold leaves nextExpiry early, which costs one look too many).
    if (now >= ledger.nextExpiry) {
      let next = Infinity;
      for (const [id, hold] of ledger.holds) {
        if (hold.expires <= now) {
          ledger.holds.delete(id);
          ledger.reserved -= hold.micros;
        } else if (hold.expires < next) {
          next = hold.expires;
        }
      }
      ledger.nextExpiry = next;
    }
    return ledger;
  }

  #counters(ledger: UserLedger, scope: string): Map<RateLimitName, WindowCounter> {
    let counters = ledger.windows.get(scope);
    if (!counters) {
      counters = new Map();
      ledger.windows.set(scope, counters);
    }
    return counters;
  }
}

/** Parsed budgets by user record: records are replaced, never changed, so this never goes stale. */
const budgets = new WeakMap<UserRecord, bigint | null>();

/** The budget in micro-units, or null for unlimited. */
export function budgetMicros(user: UserRecord): bigint | null {
  let micros = budgets.get(user);
  if (micros === undefined) {
    const parsed = user.budget === null ? null : parseDecimal(user.budget, 6);
    micros = parsed === null ? null : parsed.ok ? parsed.value : 0n;
    budgets.set(user, micros);
  }
  return micros;
}
