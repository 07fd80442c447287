// The ledger of a single process, with the same semantics as the Redis scripts (lua/admit.lua,
// lua/settle.lua), at every level of a request (user, key, team). Every method runs to completion
// without awaiting, so each is atomic.
import { RATE_WINDOWS, type RateLimitName } from '../../resources/limits.ts';
import type { BudgetPeriod } from '../../resources/kinds.ts';
import { parseDecimal } from '../../money/decimal.ts';
import type { RateLimitPolicy } from '../../resources/limits.ts';
import {
  subjectOf,
  type Admission,
  type AdmissionResult,
  type Balance,
  type Ledger,
  type LevelName,
  type OtherLevel,
  type RateStatuses,
  type Settlement,
  type SettleResult,
} from '../ledger.ts';
import { periodIndex, periodLabel, periodStart } from '../periods.ts';
import type { MemoryBudgetAlerts } from './memory-budget-alerts.ts';
import { check, FRESH, limitsOf, rolled, status, type WindowCounter, type WindowCheck } from '../sliding-window.ts';

interface UserLedger {
  ptype: BudgetPeriod | null;
  pidx: number;
  spent: bigint;
  reserved: bigint;
  holds: Map<string, { micros: bigint; expires: number }>;
  /** The highest alert threshold raised this period (percent; 0 for none). */
  alerted: number;
  /** No hold expires before this (ms): until then there is nothing to release. */
  nextExpiry: number;
  /** `<period kind>:<index>` -> spent, as the Redis store keeps it. */
  history: Map<string, bigint>;
  /** scope -> limit -> counter */
  windows: Map<string, Map<RateLimitName, WindowCounter>>;
}

/** What a level's budget is: a user's, a key's or a team's record has these two fields. */
export interface BudgetSource {
  /** null or absent: unlimited. */
  readonly budget?: string | null;
  readonly budget_period?: BudgetPeriod | null;
  /** Thresholds in percent, ascending; each raises an alert once per period. */
  readonly budget_alerts?: readonly number[] | null;
  /** A budget that only alerts, never refuses. */
  readonly soft_budget?: boolean;
}

/** One level of a request as admission and settlement see it. */
interface Level {
  readonly name: LevelName;
  readonly id: string;
  readonly source: BudgetSource;
  readonly ledger: UserLedger;
  readonly policy: RateLimitPolicy | undefined;
}

export class MemoryLedger implements Ledger {
  readonly #sources: (subject: string) => BudgetSource | undefined;
  readonly #ledgers = new Map<string, UserLedger>();
  readonly #alerts: MemoryBudgetAlerts;

  /** `sources` finds a subject's budget: a user's by id, a key's or team's by subjectOf(); alerts go to `alerts`. */
  constructor(sources: (subject: string) => BudgetSource | undefined, alerts: MemoryBudgetAlerts) {
    this.#sources = sources;
    this.#alerts = alerts;
  }

  /** The request's levels (user first), or undefined for an unknown user; a key or team gone since is left out. */
  #levels(
    userId: string,
    policy: RateLimitPolicy | undefined,
    others: readonly OtherLevel[] | undefined,
    now: number,
  ): Level[] | undefined {
    const user = this.#sources(userId);
    if (!user) return undefined;
    const levels: Level[] = [{ name: 'user', id: userId, source: user, ledger: this.#prepare(userId, user, now), policy }];
    for (const other of others ?? []) {
      const subject = subjectOf(other);
      const source = this.#sources(subject);
      if (source)
        levels.push({ name: other.level, id: other.id, source, ledger: this.#prepare(subject, source, now), policy: other.policy });
    }
    return levels;
  }

  async admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    const rate = admission.rate;
    const levels = this.#levels(userId, rate?.policy, admission.levels, admission.now);
    if (!levels) return { ok: false, reason: 'unknown_user' };
    const checks: { level: Level; counters: Map<RateLimitName, WindowCounter>; check: WindowCheck }[] = [];
    if (rate) {
      for (const level of levels) {
        if (!level.policy) continue;
        const counters = this.#counters(level.ledger, rate.scope);
        for (const [name, limit] of limitsOf(level.policy)) {
          const cost = RATE_WINDOWS[name].unit === 'requests' ? 1 : rate.tokens;
          checks.push({ level, counters, check: check(name, limit, counters.get(name) ?? FRESH, admission.now, cost) });
        }
      }
    }
    let worst: (typeof checks)[number] | undefined;
    for (const c of checks) if (c.check.retryMs > 0 && (!worst || c.check.retryMs > worst.check.retryMs)) worst = c;
    if (worst)
      return {
        ok: false,
        reason: 'rate',
        level: worst.level.name,
        limit: worst.check.name,
        retryAfterMs: worst.check.retryMs,
        rate: leastRoom(checks, false),
      };

    const hold = admission.reservation;
    let tightest: { level: Level; room: bigint } | undefined;
    if (hold) {
      for (const level of levels) {
        const budget = budgetMicros(level.source);
        if (budget === null || level.source.soft_budget) continue;
        const room = budget - level.ledger.spent - level.ledger.reserved;
        if (!tightest || room < tightest.room) tightest = { level, room };
      }
    }
    if (tightest && hold && hold.micros > tightest.room) {
      // A level whose rest is too small for this request has run out: its last thresholds are raised.
      for (const level of levels) {
        const budget = budgetMicros(level.source);
        if (budget !== null && level.source.budget_alerts && runsOut(level, budget, hold.micros))
          this.#raiseAlerts(level, budget, userId, admission.now, true);
      }
      return { ok: false, reason: 'budget', level: tightest.level.name, remainingMicros: tightest.room < 0n ? 0n : tightest.room };
    }
    for (const c of checks) c.counters.set(c.check.name, { ...c.check.counter, cur: c.check.counter.cur + c.check.cost });
    if (hold) {
      const expires = admission.now + hold.ttlMs;
      for (const { ledger } of levels) {
        ledger.holds.set(hold.id, { micros: hold.micros, expires });
        ledger.reserved += hold.micros;
        if (expires < ledger.nextExpiry) ledger.nextExpiry = expires;
      }
    }
    const rateStatuses = leastRoom(checks, true);
    if (tightest && hold)
      return { ok: true, rate: rateStatuses, budget: { level: tightest.level.name, remainingMicros: tightest.room - hold.micros } };
    return { ok: true, rate: rateStatuses };
  }

  async settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    const rate = settlement.rate;
    const levels = this.#levels(userId, rate?.policy, settlement.levels, settlement.now);
    if (!levels) return { chargedMicros: 0n };
    let charged: bigint | undefined;
    for (const level of levels) {
      const { source, ledger, policy } = level;
      const hold = settlement.reservation && ledger.holds.get(settlement.reservation.id);
      if (hold && settlement.reservation && hold.micros === settlement.reservation.micros) {
        ledger.holds.delete(settlement.reservation.id);
        ledger.reserved -= hold.micros;
      }
      let charge = settlement.actualMicros;
      const budget = budgetMicros(source);
      const ranOut = budget !== null && runsOut(level, budget, charge);
      if (budget !== null && !source.soft_budget) {
        let room = budget - ledger.spent - ledger.reserved;
        if (room < 0n) room = 0n;
        if (charge > room) charge = room;
      }
      if (charged === undefined || charge < charged) charged = charge;
      if (charge > 0n) {
        ledger.spent += charge;
        const label = `${ledger.ptype ?? ''}:${ledger.pidx}`;
        ledger.history.set(label, (ledger.history.get(label) ?? 0n) + charge);
      }
      if (budget !== null && source.budget_alerts && (charge > 0n || ranOut))
        this.#raiseAlerts(level, budget, userId, settlement.now, ranOut);
      if (rate && rate.tokens > 0 && policy) {
        const counters = this.#counters(ledger, rate.scope);
        for (const [name] of limitsOf(policy)) {
          if (RATE_WINDOWS[name].unit !== 'tokens') continue;
          const counter = rolled(counters.get(name) ?? FRESH, settlement.now, RATE_WINDOWS[name].windowMs);
          counters.set(name, { ...counter, cur: counter.cur + rate.tokens });
        }
      }
    }
    return { chargedMicros: charged ?? 0n };
  }

  async balance(subject: string, now: number): Promise<Balance> {
    const source = this.#sources(subject);
    const ledger = source ? this.#prepare(subject, source, now) : undefined;
    const period = source?.budget_period ?? null;
    const index = period ? periodIndex(period, now) : 0;
    const history: Record<string, bigint> = {};
    for (const [key, micros] of ledger?.history ?? []) {
      const [kind, idx] = key.split(':') as [string, string];
      history[periodLabel((kind || null) as BudgetPeriod | null, Number(idx))] = micros;
    }
    return {
      budgetMicros: source ? budgetMicros(source) : null,
      period,
      spentMicros: ledger?.spent ?? 0n,
      reservedMicros: ledger?.reserved ?? 0n,
      periodStart: period ? periodStart(period, index) : null,
      periodEnd: period ? periodStart(period, index + 1) : null,
      history,
    };
  }

  /**
   * Raises the level's alerts its spending has reached, once per period each, and when its budget
   * `ranOut` (runsOut) those up to 100% too, however much was spent (as raise_alerts, lua/ledger-common.lua).
   */
  #raiseAlerts(level: Level, budget: bigint, userId: string, now: number, ranOut: boolean): void {
    const { ledger } = level;
    for (const percent of level.source.budget_alerts ?? []) {
      if (percent <= ledger.alerted) continue;
      const reached = ledger.spent * 100n >= budget * BigInt(percent);
      if (!reached && !(ranOut && percent <= 100)) continue;
      ledger.alerted = percent;
      const period = `${ledger.ptype ?? ''}:${ledger.pidx}`;
      this.#alerts.raise({
        key: `${level.name}:${level.id}:${period}:${percent}`,
        level: level.name,
        id: level.id,
        user: userId,
        percent,
        budgetMicros: budget,
        spentMicros: ledger.spent,
        exhausted: !reached,
        period,
        at: now,
      });
    }
  }

  /** Forgets a deleted user's, key's or team's money and limits (a subject as for balance). */
  forget(subject: string): void {
    this.#ledgers.delete(subject);
  }

  /** The subject's ledger at `now`: period rolled forward, expired holds released. */
  #prepare(subject: string, source: BudgetSource, now: number): UserLedger {
    let ledger = this.#ledgers.get(subject);
    if (!ledger) {
      ledger = {
        ptype: null,
        pidx: 0,
        spent: 0n,
        reserved: 0n,
        alerted: 0,
        holds: new Map(),
        nextExpiry: Infinity,
        history: new Map(),
        windows: new Map(),
      };
      this.#ledgers.set(subject, ledger);
    }
    const ptype = source.budget_period ?? null;
    const pidx = ptype ? periodIndex(ptype, now) : 0;
    if (ledger.ptype !== ptype) {
      ledger.ptype = ptype;
      ledger.pidx = pidx;
    } else if (pidx > ledger.pidx) {
      ledger.pidx = pidx;
      ledger.spent = 0n;
      ledger.alerted = 0;
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

/** Parsed budgets by record: records are replaced, never changed, so this never goes stale. */
const budgets = new WeakMap<BudgetSource, bigint | null>();

/** The budget in micro-units, or null for unlimited. */
export function budgetMicros(user: BudgetSource): bigint | null {
  let micros = budgets.get(user);
  if (micros === undefined) {
    const parsed = user.budget == null ? null : parseDecimal(user.budget, 6);
    micros = parsed === null ? null : parsed.ok ? parsed.value : 0n;
    budgets.set(user, micros);
  }
  return micros;
}

/**
 * Whether a level's hard budget has run out for a request that needs `micros` (its hold at
 * admission, its real cost at settlement): less is left unspent. Spending seldom lands on a hard
 * budget exactly, as the last requests are refused (or cut short) while a little is left, so this
 * is what reaching 100% means for it. Holds of requests in flight are not counted: they may yet
 * settle for less, so a refusal they cause alone is passing, not running out.
 */
function runsOut({ source, ledger }: Level, budget: bigint, micros: bigint): boolean {
  return !source.soft_budget && micros > budget - ledger.spent;
}

/** Each limit's status at the level where it has least room (as redis-ledger-admission.ts reads the script's). */
function leastRoom(checks: readonly { check: WindowCheck }[], admitted: boolean): RateStatuses {
  const out: RateStatuses = {};
  for (const { check: c } of checks) {
    const s = status(c, admitted);
    const seen = out[c.name];
    if (seen === undefined || s.remaining < seen.remaining) out[c.name] = s;
  }
  return out;
}
