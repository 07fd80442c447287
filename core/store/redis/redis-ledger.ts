// The ledger on Redis: admission and settlement are each one step of a Lua script (lua/admit.lua,
// lua/settle.lua), so every change of money and limits is atomic across all gateways. The
// admissions and settlements of one turn of the event loop go in one script call (lua/ledger.lua),
// as one JSON argument, and come back as one JSON reply (lua/ledger-common.lua says why).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { RATE_LIMIT_NAMES, RATE_WINDOWS, type RateLimitName, type RateLimitPolicy } from '../../resources/limits.ts';
import { DAY_MS } from '../../time.ts';
import type { BudgetPeriod } from '../../resources/kinds.ts';
import {
  subjectOf,
  type Admission,
  type AdmissionResult,
  type Balance,
  type LevelName,
  type Ledger,
  type OtherLevel,
  type RateStatuses,
  type Settlement,
  type SettleResult,
} from '../ledger.ts';
import { periodIndex, periodIndices, periodLabel, periodStart } from '../periods.ts';
import { randomId } from '../../ids.ts';
import { keys, levelKeys } from './keys.ts';
import { BudgetLease, BUDGET_LEASES, type HoldChange } from './redis-budget-lease.ts';
import { StoreUnavailableError } from '../store-errors.ts';
import { defineScript, type LuaScript } from './scripts.ts';

/** Names of a limit's three fields in the rate-limit hash (`rpm.s`, `rpm.c`, `rpm.p`): stored data, so they never change. */
const WINDOW_FIELDS: Record<RateLimitName, string> = {
  requests_per_minute: 'rpm',
  requests_per_day: 'rpd',
  tokens_per_minute: 'tpm',
  tokens_per_day: 'tpd',
};

/**
 * A rate-limit hash lives this long after its last window rolled: the longest window and the one
 * before it, which is all its counters remember.
 */
const WINDOW_HASH_TTL_MS = 2 * Math.max(...Object.values(RATE_WINDOWS).map((w) => w.windowMs));
if (WINDOW_HASH_TTL_MS !== 2 * DAY_MS) throw new Error('a rate-limit window longer than a day needs its hash kept longer');

/**
 * The ledger scripts' constants, written from the TypeScript declarations (resources/limits.ts),
 * so window lengths and the order of the limits are declared once.
 */
function ledgerPrelude(): string {
  const windows = RATE_LIMIT_NAMES.map((name) => {
    const f = WINDOW_FIELDS[name];
    const { windowMs, unit } = RATE_WINDOWS[name];
    return `  ${name} = { window = ${windowMs}, unit = '${unit}', s = '${f}.s', c = '${f}.c', p = '${f}.p' },`;
  });
  return [
    `local WINDOWS = {\n${windows.join('\n')}\n}`,
    `local LIMIT_NAMES = { ${RATE_LIMIT_NAMES.map((name) => `'${name}'`).join(', ')} }`,
    `local WINDOW_HASH_TTL_MS = ${WINDOW_HASH_TTL_MS}`,
    `local ALERTS_STREAM = '${keys.alerts}'`,
    `local ALERTS_KEPT = ${ALERTS_KEPT}`,
  ].join('\n');
}

/** Fields every step has (lua/ledger-common.lua): its time and the period indices of that time, as text. */
interface StepTime {
  readonly now: number;
  readonly day: string;
  readonly week: string;
  readonly month: string;
}

/** One admission of a batch (lua/admit.lua lists the fields). */
interface AdmitStep extends StepTime {
  readonly t: 'a';
  readonly hold: string;
  readonly micros: string;
  readonly ttl: number;
  readonly tokens: number;
  readonly limits: Partial<Record<RateLimitName, number>>;
  readonly lease: string;
  readonly size: number;
  readonly headroom: number;
  readonly open_ms: number;
  readonly may_wait: boolean;
}

/** One settlement of a batch (lua/settle.lua lists the fields). */
interface SettleStep extends StepTime {
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
}

/** Alerts the stream keeps (roughly: MAXLEN ~), delivered or not: far more than are ever raised between deliveries. */
const ALERTS_KEPT = 10_000;

/** Most admissions and settlements sent in one script call. */
const MAX_BATCH = 128;

/** A step waiting for its batch: whose keys it uses, its kind and arguments, what to do with its reply. */
interface Pending {
  readonly userId: string;
  /** The router whose rate-limit windows it counts in ('-' when none). */
  readonly scope: string;
  /** Its key's and team's levels, when they have budgets or limits. */
  readonly levels: readonly OtherLevel[] | undefined;
  readonly step: AdmitStep | SettleStep;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Sends the waiting requests in one script call and hands each its own reply. Each level's keys
 * go once per batch (`k`), and each request names its sets by position (`r`: index, arguments,
 * and `x`, its other levels): the keys are most of a request's bytes, and a batch often holds
 * several requests of one user.
 */
function runBatch(waiting: Pending[], script: LuaScript, onFailure: () => void): void {
  const batch = waiting.splice(0, waiting.length);
  if (batch.length === 0) return;
  const keySets: string[][] = [];
  const positions = new Map<string, number>();
  const keySet = (subject: string, scope: string): number => {
    const id = `${subject}\u0000${scope}`;
    let position = positions.get(id);
    if (position === undefined) {
      position = keySets.push(subjectKeys(subject, scope)); // 1-based, as Lua counts
      positions.set(id, position);
    }
    return position;
  };
  const requests = batch.map(({ userId, scope, levels, step }) => {
    const k = keySet(userId, scope);
    // Each step names the user and its levels by id: the alerts it may raise say whose they are
    // (a settlement's, and an admission's refused by a budget that ran out).
    if (levels === undefined || levels.length === 0) return { k, u: userId, ...step };
    const x = levels.map((l) => ({ k: keySet(subjectOf(l), scope), n: l.level, id: l.id, limits: limitsOf(l.policy) }));
    return { k, u: userId, ...step, x };
  });
  script.run(JSON.stringify({ k: keySets, r: requests })).then(
    (replies) => {
      const parsed = JSON.parse(replies as string) as unknown[];
      for (const [i, entry] of batch.entries()) entry.resolve(parsed[i]);
    },
    (error: unknown) => {
      onFailure();
      for (const entry of batch) entry.reject(error);
    },
  );
}

/** An admission's reply (lua/admit.lua): the result, and the size of the lease granted with it. */
type AdmitReply = { result: AdmissionResult; leased: number } | { busyUntil: number };

function readAdmission(reply: (string | number)[]): AdmitReply {
  switch (reply[0]) {
    case 'unknown_user':
      return { result: { ok: false, reason: 'unknown_user' }, leased: 0 };
    case 'budget':
      return { result: { ok: false, reason: 'budget', level: reply[2] as LevelName, remainingMicros: BigInt(reply[1]!) }, leased: 0 };
    case 'rate':
      return {
        result: {
          ok: false,
          reason: 'rate',
          level: reply[3] as LevelName,
          limit: reply[1] as RateLimitName,
          retryAfterMs: Number(reply[2]),
          rate: readStatuses(reply, 4),
        },
        leased: 0,
      };
    case 'busy':
      return { busyUntil: Number(reply[1]) };
    default: {
      const rate = readStatuses(reply, 4);
      const result: AdmissionResult =
        reply[2] === ''
          ? { ok: true, rate }
          : { ok: true, rate, budget: { level: reply[2] as LevelName, remainingMicros: BigInt(reply[3]!) } };
      return { result, leased: Number(reply[1]) };
    }
  }
}

/** A user's leases on one router (or on none, scope '-'): the one open, and whether one is being asked for. */
interface LeaseSlot {
  lease: BudgetLease | undefined;
  /** The admission asking for a lease, while in flight: others wait for it rather than ask too. */
  asking: Promise<unknown> | undefined;
  /** Redis granted none at this time (a limit is near): ask again from then. */
  noLeaseUntil: number;
}

export interface RedisLedgerOptions {
  /** Size of a lease, in requests (redis-lease.ts); 0 admits every request in Redis. */
  readonly leaseRequests: number;
  /** Whether the connection is up: leases admit only then, so an outage answers as one at once. */
  readonly healthy: () => boolean;
}

export class RedisLedger implements Ledger {
  readonly #redis: Redis;
  readonly #run: LuaScript;
  readonly #waiting: Pending[] = [];
  readonly #options: RedisLedgerOptions;
  readonly #slots = new Map<string, LeaseSlot>();
  /** Leases that requests in flight were admitted against, by the request's hold id. */
  readonly #leased = new Map<string, BudgetLease>();

  constructor(redis: Redis, options: RedisLedgerOptions) {
    this.#redis = redis;
    this.#options = options;
    // Redis scripts cannot import one another: the shared functions and both steps are loaded
    // before ledger.lua, which runs the batch.
    this.#run = defineScript(redis, 'ledger', 0, { prelude: ledgerPrelude(), before: ['ledger-common', 'admit', 'settle'] });
  }

  /**
   * Admits against the user's open lease when it has room; otherwise in Redis, asking for a lease
   * with the admission while the user is far from every limit (redis-lease.ts).
   */
  admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    if (this.#options.leaseRequests === 0) return this.#admitInRedis(userId, admission);
    const slotKey = slotOf(userId, admission);
    let slot = this.#slots.get(slotKey);
    if (slot === undefined) {
      slot = { lease: undefined, asking: undefined, noLeaseUntil: 0 };
      this.#slots.set(slotKey, slot);
    }
    const admitted = this.#admitOnLease(slot, admission);
    if (admitted) return Promise.resolve(admitted);
    if (slot.asking) {
      const current = slot;
      return slot.asking.then(() => this.#admitOnLease(current, admission) ?? this.#admitInRedis(userId, admission));
    }
    if (admission.now < slot.noLeaseUntil || !this.#options.healthy()) return this.#admitInRedis(userId, admission);
    return this.#askLease(slot, userId, admission);
  }

  #admitOnLease(slot: LeaseSlot, admission: Admission): AdmissionResult | undefined {
    const lease = slot.lease;
    if (lease === undefined) return undefined;
    if (this.#options.healthy() && lease.admit(admission)) {
      if (admission.reservation) this.#leased.set(admission.reservation.id, lease);
      const budget = lease.budget();
      return budget ? { ok: true, rate: lease.statuses(admission.now), budget } : { ok: true, rate: lease.statuses(admission.now) };
    }
    this.#close(slot);
    return undefined;
  }

  #askLease(slot: LeaseSlot, userId: string, admission: Admission): Promise<AdmissionResult> {
    const leaseId = `lease-${randomId()}`;
    const asking = this.#send(userId, admission, leaseId, true).then((reply) => this.#afterBusy(userId, admission, reply));
    slot.asking = asking;
    return asking.then(
      ({ result, leased }) => {
        slot.asking = undefined;
        if (leased > 0 && result.ok) {
          const lease = new BudgetLease(leaseId, userId, admission, leased, result.rate, result.budget);
          slot.lease = lease;
          setTimeout(() => slot.lease === lease && this.#close(slot), BUDGET_LEASES.openMs).unref();
        } else {
          slot.noLeaseUntil = admission.now + BUDGET_LEASES.openMs;
        }
        return result;
      },
      (error: unknown) => {
        slot.asking = undefined;
        throw error;
      },
    );
  }

  /** Admits in Redis without asking for a lease. */
  #admitInRedis(userId: string, admission: Admission): Promise<AdmissionResult> {
    return this.#send(userId, admission, '', true).then((reply) => this.#afterBusy(userId, admission, reply).then(({ result }) => result));
  }

  /** A 'busy' admission waits until the lease that made it so has been given back, then asks once more, for an answer. */
  async #afterBusy(userId: string, admission: Admission, reply: AdmitReply): Promise<{ result: AdmissionResult; leased: number }> {
    if (!('busyUntil' in reply)) return reply;
    await sleep(Math.min(Math.max(reply.busyUntil - admission.now, 0), BUDGET_LEASES.openMs + BUDGET_LEASES.graceMs));
    const again = await this.#send(userId, admission, '', false);
    if ('busyUntil' in again) throw new Error('the ledger answered busy to an admission that may not wait');
    return { result: again.result, leased: 0 };
  }

  #send(userId: string, admission: Admission, leaseId: string, mayWait: boolean): Promise<AdmitReply> {
    const { now, reservation: hold, rate } = admission;
    return new Promise((resolve, reject) => {
      this.#add({
        userId,
        scope: rate?.scope ?? '-',
        levels: admission.levels,
        step: {
          t: 'a',
          ...stepTime(now),
          hold: hold?.id ?? '',
          micros: hold ? hold.micros.toString() : '0',
          ttl: hold?.ttlMs ?? 0,
          tokens: rate?.tokens ?? 0,
          limits: limitsOf(rate?.policy),
          lease: leaseId,
          size: this.#options.leaseRequests,
          headroom: BUDGET_LEASES.headroom,
          open_ms: BUDGET_LEASES.openMs + BUDGET_LEASES.graceMs,
          may_wait: mayWait,
        },
        resolve: (reply) => resolve(readAdmission(reply as (string | number)[])),
        reject,
      });
    });
  }

  /** Settlements come after the answer, in the batch of the turn they are made in (see admit). */
  settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    const { now, reservation: hold, actualMicros, rate } = settlement;
    // A request admitted on a lease settles against the lease's hold.
    const lease = hold && this.#leased.get(hold.id);
    if (lease) this.#leased.delete(hold!.id);
    const step = lease ? leaseHold(lease, lease.settle(hold!.micros, actualMicros)) : hold;
    // Redis does not answer: refused at once (the hold expires by itself) rather than waiting out the command timeout.
    if (!this.#options.healthy()) return Promise.reject(new StoreUnavailableError('the store (Redis) does not answer'));
    return this.#settleStep(
      userId,
      rate?.scope ?? '-',
      settlement.levels,
      settleStep(now, step, actualMicros, rate?.tokens ?? 0, rate?.policy),
    );
  }

  #settleStep(userId: string, scope: string, levels: readonly OtherLevel[] | undefined, step: SettleStep): Promise<SettleResult> {
    return new Promise((resolve, reject) => {
      this.#add({
        userId,
        scope,
        levels,
        step,
        resolve: (charged) => resolve({ chargedMicros: BigInt(charged as string | number) }),
        reject,
      });
    });
  }

  /** Ends the slot's lease: its hold shrinks to what requests in flight hold, and its unused rate-limit room goes back. */
  #close(slot: LeaseSlot): Promise<unknown> {
    const lease = slot.lease;
    if (lease === undefined) return Promise.resolve();
    slot.lease = undefined;
    const { hold, unused } = lease.close();
    if (hold.before === hold.after && unused.every((n) => n === 0)) return Promise.resolve();
    // On the lease's clock (admissions carry their own `now`), never past its end.
    const now = Math.min(Math.max(Date.now(), lease.grantedAt), lease.grantedAt + BUDGET_LEASES.openMs);
    return this.#settleStep(
      lease.userId,
      lease.scope,
      lease.levels,
      settleStep(now, leaseHold(lease, hold), 0n, 0, undefined, { grantedAt: lease.grantedAt, unused }),
    ).catch(() => {
      // Redis is unreachable: the hold expires by itself, and the rate-limit room with its window.
    });
  }

  /**
   * Gives back the leases charged to one subject (a user, key or team whose budget or limits
   * changed: an id, or ledger.ts subjectOf()) or, with null, all of them (shutting down, or the
   * routers changed). Resolves when Redis has them back.
   */
  closeLeases(subject: string | null): Promise<unknown> {
    const closing: Promise<unknown>[] = [];
    for (const slot of this.#slots.values()) {
      if (slot.lease && (subject === null || slot.lease.charges(subject))) closing.push(this.#close(slot));
    }
    return Promise.all(closing);
  }

  /** A batch failed (Redis unreachable): stop admitting on leases; their holds expire by themselves. */
  #dropLeases(): void {
    for (const slot of this.#slots.values()) {
      slot.lease?.close();
      slot.lease = undefined;
    }
  }

  #add(step: Pending): void {
    this.#waiting.push(step);
    if (this.#waiting.length >= MAX_BATCH) this.#flush();
    else if (this.#waiting.length === 1) setImmediate(() => this.#flush());
  }

  #flush(): void {
    runBatch(this.#waiting, this.#run, () => this.#dropLeases());
  }

  async balance(subject: string, now: number): Promise<Balance> {
    const k = levelKeys(subject);
    const replies = await this.#redis
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
}

/** A hold as a settlement step sees it: `micros` before the step; a lease's also says what is left after it, held for `ttlMs`. */
interface HoldStep {
  readonly id: string;
  readonly micros: bigint;
  readonly after?: bigint;
  readonly ttlMs?: number;
}

/** The lease's hold for a settlement step; no id when it has none (a lease of rate-limit room only). */
function leaseHold(lease: BudgetLease, change: HoldChange): HoldStep {
  return { id: change.before > 0n ? lease.id : '', micros: change.before, after: change.after, ttlMs: lease.ttlMs };
}

/** One settle.lua step; `giveBack` when a lease closes (its unused room, in RATE_LIMIT_NAMES order). */
function settleStep(
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

/** A level's key set, as lua/ledger-common.lua reads it (K). */
function subjectKeys(subject: string, scope: string): string[] {
  const k = levelKeys(subject);
  return [k.budget, k.ledger, k.holds, k.history, `${k.prefix}:rl:${scope}`];
}

/** Requests share a lease when they have the same user, router and other levels. */
function slotOf(userId: string, admission: Admission): string {
  const slot = `${userId}\u0000${admission.rate?.scope ?? '-'}`;
  const levels = admission.levels;
  if (levels === undefined || levels.length === 0) return slot;
  let out = slot;
  for (const level of levels) out += `\u0000${subjectOf(level)}`;
  return out;
}

function stepTime(now: number): StepTime {
  const { daily, weekly, monthly } = periodIndices(now);
  return { now, day: String(daily), week: String(weekly), month: String(monthly) };
}

/** The limits a policy sets, by name (the scripts take an absent one as "no limit"). */
function limitsOf(policy: RateLimitPolicy | undefined): Partial<Record<RateLimitName, number>> {
  const limits: Partial<Record<RateLimitName, number>> = {};
  if (policy) for (const name of RATE_LIMIT_NAMES) if (policy[name] !== undefined) limits[name] = policy[name];
  return limits;
}

/** Each limit's status at the level where it has least room (a limit set at several levels comes once per level). */
function readStatuses(reply: (string | number)[], from: number): RateStatuses {
  const out: RateStatuses = {};
  for (let i = from; i + 3 < reply.length; i += 4) {
    const name = reply[i] as RateLimitName;
    const remaining = Number(reply[i + 2]);
    const seen = out[name];
    if (seen === undefined || remaining < seen.remaining)
      out[name] = { limit: Number(reply[i + 1]), remaining, resetMs: Number(reply[i + 3]) };
  }
  return out;
}
